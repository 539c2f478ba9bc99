// The OpenAPI 3.1 document, generated from the route schemas, at /api/openapi.json.
import { openapi } from "@elysiajs/openapi";
import { z } from "zod";
import { LIMITS_DESCRIPTION } from "./limits-description.ts";

const DESCRIPTION = `Quarry stores documents in knowledge bases, parses, chunks, embeds and indexes them in the background,
and answers searches with ranked chunks for a language model.

**Authentication.** Send \`Authorization: Bearer <API key>\` (or the dashboard JWT from signup/login) on every /v1 call.

**Errors.** Every error is \`{"error":{"code","message","details"}}\`. Status by code: VALIDATION_ERROR 400
(details.issues = [{path, message}]), AUTHENTICATION_ERROR 401, NOT_FOUND 404, CONFLICT 409, RATE_LIMIT_EXCEEDED 429,
USAGE_LIMIT_EXCEEDED 429, EXTERNAL_SERVICE_ERROR 503, INTERNAL_ERROR 500.

**Pagination.** Lists return \`{data, meta:{cursor, has_more}}\`; pass \`cursor\` to get the next page. Default page size 20, maximum 100.

**Request ids.** Every response carries \`X-Request-Id\`, the id of its entry in the request history.

${LIMITS_DESCRIPTION}`;

export function openapiPlugin(version: string) {
  return openapi({
    path: "/docs",
    specPath: "/openapi.json",
    provider: null,
    mapJsonSchema: { zod: z.toJSONSchema },
    documentation: {
      openapi: "3.1.0",
      info: { title: "Quarry API", version, description: DESCRIPTION },
      components: {
        securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "API key (qk_…) or dashboard JWT" } },
      },
      security: [{ bearer: [] }],
    },
    exclude: { paths: ["/api/docs", "/api/openapi.json"] },
  });
}
