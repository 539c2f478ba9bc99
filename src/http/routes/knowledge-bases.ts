// /v1/knowledge-bases (service spec §4.2).
import { Elysia } from "elysia";
import { z } from "zod";
import type { AppContext } from "../context.ts";
import { authenticated } from "../auth.ts";
import { requestState } from "../request-state.ts";
import { Metadata, MetadataInput, PaginationQuery, dataOf, errorResponses, meteredErrorResponses, pageOf, prefixedId, V1_ERRORS, Timestamp, Count, returnedId } from "../schemas.ts";
import { createKnowledgeBase, getKnowledgeBase, listKnowledgeBases, updateKnowledgeBase } from "../../store/knowledge-bases.ts";
import { enforcedLimit } from "../../billing/limits.ts";

export const KnowledgeBaseSchema = z.object({
  id: returnedId("kb"),
  account_id: returnedId("acc"),
  name: z.string(),
  description: z.string().nullable(),
  metadata: Metadata,
  document_count: Count,
  created_at: Timestamp,
  updated_at: Timestamp,
});

const CreateBody = z.object({
  name: z.string().min(1).max(256),
  description: z.string().max(1024).nullish(),
  metadata: MetadataInput.nullish(),
});

const PatchBody = z.object({
  name: z.string().min(1).max(256).optional(),
  description: z.string().max(1024).nullish(),
  metadata: MetadataInput.optional().describe(`Replaces the existing metadata. ${MetadataInput.description}`),
});

export const KbParams = z.object({ kb_id: prefixedId("kb") });

const tags = ["Knowledge bases"];

export function knowledgeBaseRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/knowledge-bases" })
    .use(authenticated(ctx))
    .onBeforeHandle(({ request, params }) => {
      const kbId = (params as Record<string, string> | undefined)?.kb_id;
      if (kbId) requestState(request).kbId = kbId;
    })
    .post(
      "",
      ({ body, principal, set }) => {
        set.status = 201;
        const account = principal.account;
        return {
          data: createKnowledgeBase(ctx.db, {
            accountId: account.id,
            name: body.name,
            description: body.description ?? null,
            metadata: body.metadata ?? {},
            limit: enforcedLimit(ctx.config.limitsEnabled, account, (p) => p.knowledgeBases),
            now: ctx.clock.now(),
          }),
        };
      },
      {
        body: CreateBody,
        response: { 201: dataOf(KnowledgeBaseSchema) },
        detail: { operationId: "createKnowledgeBase", summary: "Create a knowledge base", tags, responses: meteredErrorResponses(...V1_ERRORS) },
      },
    )
    .get("", ({ query, principal }) => listKnowledgeBases(ctx.db, principal.account.id, query.limit, query.cursor), {
      query: PaginationQuery,
      response: { 200: pageOf(KnowledgeBaseSchema) },
      detail: { operationId: "listKnowledgeBases", summary: "List knowledge bases, newest first", tags, responses: errorResponses(...V1_ERRORS) },
    })
    .get("/:kb_id", ({ params, principal }) => ({ data: getKnowledgeBase(ctx.db, principal.account.id, params.kb_id) }), {
      params: KbParams,
      response: { 200: dataOf(KnowledgeBaseSchema) },
      detail: { operationId: "getKnowledgeBase", summary: "Get a knowledge base", tags, responses: errorResponses(...V1_ERRORS, 404) },
    })
    .patch(
      "/:kb_id",
      ({ params, body, principal }) => ({
        data: updateKnowledgeBase(ctx.db, principal.account.id, params.kb_id, body, ctx.clock.now()),
      }),
      {
        params: KbParams,
        body: PatchBody,
        response: { 200: dataOf(KnowledgeBaseSchema) },
        detail: {
          operationId: "updateKnowledgeBase", summary: "Update a knowledge base",
          description: "Sets the fields given; metadata is replaced whole. A body that sets no field returns the knowledge base unchanged (updated_at included).",
          tags,
          responses: errorResponses(...V1_ERRORS, 404),
        },
      },
    )
    .delete(
      "/:kb_id",
      ({ params, principal }) => {
        ctx.deletions.deleteKnowledgeBase(principal.account.id, params.kb_id);
        ctx.ingest.wake(); // cancels its documents' running jobs
        ctx.searchIndexes.forget(params.kb_id);
        return { data: { deleted: true } };
      },
      {
        params: KbParams,
        response: { 200: dataOf(z.object({ deleted: z.boolean() })) },
        detail: {
          operationId: "deleteKnowledgeBase", summary: "Delete a knowledge base",
          description:
            "Irreversible. The knowledge base is gone at once: 404 on every endpoint, not listed, and not counted against the plan's knowledge base, document or storage limits. " +
            "Its documents, chunks, vectors, keyword index rows and stored files are removed in the background right after, in short steps that never hold up other requests " +
            "(a million chunks in under a minute); a deletion a restart interrupts is finished by the next start.",
          tags,
          responses: errorResponses(...V1_ERRORS, 404),
        },
      },
    );
}
