import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { authenticated } from "../auth.ts";
import { accountView } from "../../store/accounts.ts";
import { dataOf, errorResponses, V1_ERRORS } from "../schemas.ts";
import { AccountSchema } from "./auth.ts";

export function accountRoutes(ctx: AppContext) {
  return new Elysia().use(authenticated(ctx)).get("/account", ({ principal }) => ({ data: accountView(principal.account) }), {
    response: { 200: dataOf(AccountSchema) },
    detail: { operationId: "getAccount", summary: "The authenticated account", tags: ["Accounts"], responses: errorResponses(...V1_ERRORS) },
  });
}
