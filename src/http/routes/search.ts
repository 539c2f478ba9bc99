// POST /v1/knowledge-bases/{kb_id}/search (service spec §4.4).
import { Elysia } from "elysia";
import { z } from "zod";
import type { AppContext } from "../context.ts";
import { authenticated } from "../auth.ts";
import { requestState } from "../request-state.ts";
import { Count, Metadata, dataOf, meteredErrorResponses, prefixedId, returnedId, V1_ERRORS } from "../schemas.ts";
import { assertKnowledgeBaseOwned } from "../../store/knowledge-bases.ts";
import { chargeSearchQuery } from "../../billing/usage.ts";
import { SearchService, SEARCH_MODES, HYBRID_SIDE_DEPTH } from "../../search/search.ts";
import { FILTER_LIMITS, filterIssues, OPERATORS, type MetadataFilter } from "../../search/filters.ts";
import { KEYWORD_SCORE_MIDPOINT, RRF_K } from "../../search/scores.ts";
import { BM25_B, BM25_K1 } from "../../search/keyword/bm25.ts";
import { RERANK_POOL_FACTOR, RERANK_POOL_MIN } from "../../search/rerank.ts";
import { INVISIBLE } from "../../characters.ts";

// z.unknown, not z.record: a record is rebuilt key by key, which silently drops an own "__proto__" key
// (JSON.parse keeps it) and with it that key's condition; filterIssues checks the shape itself.
const Filter = z
  .unknown()
  .superRefine((filter, ctx) => {
    for (const issue of filterIssues(filter)) ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
  })
  .meta({ type: "object", additionalProperties: { type: "object" } })
  .describe(
    `{metadata_key: {operator: value, …}, …}; every condition must hold. Operators: ${OPERATORS.join(", ")}. ` +
      "There are no logical operators: $and, $or, $not or $nor holding a list of filters or a filter is a validation error. " +
      "Values compare by type (numbers with numbers, strings with strings, booleans with booleans); two ISO 8601 dates " +
      "compare as instants (a date-time without an offset is UTC). $eq/$ne take a string, number or boolean (not null); " +
      "$gt/$gte/$lt/$lte a number or an ISO date (other strings are a validation error, not compared as text); " +
      `$in/$nin an array of at most ${FILTER_LIMITS.listValues} strings, numbers or booleans. A metadata array matches $eq/$in when any of its own ` +
      "elements matches (an array nested in it matches nothing). $ne and $nin also match documents that lack the key; the other operators do not. Absent or null: no filter. " +
      `Limits: at most ${FILTER_LIMITS.keys} keys of at most ${FILTER_LIMITS.keyLength} characters, string values of at most ` +
      `${FILTER_LIMITS.stringLength} characters, ${FILTER_LIMITS.bytes} bytes as JSON in all.`,
  );

/** 1–10,000 characters, not only whitespace and invisible characters (a soft hyphen, a zero-width space: nothing to search for). */
const QueryText = z
  .string()
  .min(1)
  .max(10_000)
  .refine((q) => q === "" || q.replace(INVISIBLE, "").trim().length > 0, "must not be blank"); // "" is reported by min(1) alone

const SearchBody = z.object({
  query: QueryText.describe("Natural-language query, 1–10,000 characters, not only whitespace (nor invisible characters such as a zero-width space)"),
  // The bounds first, each ending the checks when it fails: 1e16 was told both "at most 50" and "at most
  // 9007199254740991" (the integer check's own bound), two issues for one value.
  top_k: z.number().min(1, { abort: true }).max(50, { abort: true }).int().default(10).describe("Results to return, 1–50"),
  rerank: z.boolean().default(true).describe("Rerank with the cross-encoder when one is installed"),
  filter: Filter.nullish(),
  score_threshold: z
    .number()
    .min(0)
    .max(1)
    .nullish()
    .describe("Drop results whose final score (after reranking) is below this; absent or null: no threshold"),
  include_metadata: z.boolean().default(true).describe("Include metadata and document_metadata in each result"),
  mode: z.enum(SEARCH_MODES).default("vector"),
  alpha: z.number().min(0).max(1).default(0.6).describe("Hybrid mode: weight of the vector side (0 keyword only … 1 vector only)"),
  keyword_query: QueryText.nullish().describe(
    "Text for the keyword side in keyword and hybrid modes, 1–10,000 characters, not only whitespace (nor invisible characters); absent or null: the query",
  ),
});

const ResultSchema = z.object({
  chunk_id: returnedId("chk"),
  document_id: returnedId("doc"),
  document_name: z.string(),
  text: z.string(),
  score: z.number().min(0).max(1).describe("Relevance 0–1, higher is more relevant; see the description for each mode"),
  metadata: z
    .object({
      chunk_index: Count,
      start_page: Count.nullable(),
      end_page: Count.describe("1 for text-only documents"),
      section_heading: z.string(),
    })
    .optional(),
  document_metadata: Metadata.optional(),
});

const SearchResponseSchema = z.object({
  query: z.string(),
  results: z.array(ResultSchema),
  usage: z.object({
    embedding_tokens: Count.describe(
        "Tokens used to embed the query; 0 in keyword mode and in hybrid mode with alpha 0. The same for a query asked again in the same knowledge base, whose embedding is reused (the last QUARRY_QUERY_CACHE_ENTRIES queries are kept)",
      ),
    rerank_applied: z.boolean().describe("false when reranking was not requested, no reranker is installed, or it failed or timed out"),
    rerank_calls: Count.describe("Reranker calls that were applied: 1 when rerank_applied, else 0 (a failed or timed-out call counts 0)"),
    chunks_searched: Count.describe("Chunks of ready documents in the knowledge base that the filter lets through"),
    search_mode: z.enum(SEARCH_MODES),
  }),
});

const DESCRIPTION = `Searches the chunks of the knowledge base's **ready** documents only: a document being processed, also again
after a replacement (PUT), is not searchable until it is ready, then with its new chunks, from the very next search
(after a bulk import, the first search may wait while the index takes in the new chunks). Each call counts as one search
query against the plan allowance (429 USAGE_LIMIT_EXCEEDED with details {limit, current_usage, plan, requested} when
it is used up), also when the embedding model then fails (503 EXTERNAL_SERVICE_ERROR); a call refused before searching
(400, 401, 404, 429) counts nothing.

**Modes.** \`vector\` (default): the query is embedded and compared with the chunks by cosine similarity: with
every chunk while a knowledge base's indexed part holds fewer than 8,192, else through an approximate index (lists
around centroids) that scores the nearest 10 % of them and at least 20,000 (recall@10 ≈ 0.97 against exact search on
real embeddings at 1M chunks); a filter never makes it return fewer than min(top_k, matching chunks).
\`keyword\`: BM25 (k1 = ${BM25_K1}, b = ${BM25_B}) over stemmed English terms with stopwords removed; any text is accepted, query
syntax characters are ignored, terms are ORed; no embedding call (embedding_tokens 0). Chinese, Japanese and Korean
are matched by character and by pair of characters, Thai, Lao, Khmer and Burmese by dictionary word. A query with no
searchable terms returns no results. \`keyword_query\` replaces the text of the keyword side. \`hybrid\`: both, fused by
Reciprocal Rank Fusion (k = ${RRF_K}) over the best ${HYBRID_SIDE_DEPTH} chunks of each side, the vector side weighted by
alpha and the keyword side by 1 − alpha; alpha 0 runs the keyword side only (no embedding call, embedding_tokens 0) and
alpha 1 the vector side only.

**Scores** are 0–1, higher is better, and a given raw relevance always maps to the same score within a mode:
vector = cosine similarity (negatives as 0); keyword = s / (s + ${KEYWORD_SCORE_MIDPOINT}) for the BM25 score s;
hybrid = (alpha/(${RRF_K} + vector rank) + (1 − alpha)/(${RRF_K} + keyword rank)) × ${RRF_K + 1}, so 1 means first on
both sides (ranks from 1; chunks a side scores equally share the best of their ranks, so copies of one text score alike); reranked = the cross-encoder's relevance probability. Scores of different modes are not comparable.

**Reranking** (default on) applies when a cross-encoder is installed: the best max(${RERANK_POOL_MIN},
${RERANK_POOL_FACTOR} × top_k) candidates are rescored and reordered. If it fails or exceeds the configured timeout
(QUARRY_RERANK_TIMEOUT_MS, default 2000 ms) the first-stage results come back with rerank_applied false.
score_threshold applies to the final score, after reranking.

**Filters** narrow the search to chunks of documents whose metadata matches, before ranking: however selective the
filter, top_k results come back whenever that many matching chunks exist.`;

export function searchRoutes(ctx: AppContext) {
  // Made at the first search: the app is built while the models load (server.ts).
  let service: SearchService | null = null;
  const searchService = () =>
    (service ??= new SearchService({
      db: ctx.db,
      models: ctx.models,
      rerankTimeoutMs: ctx.config.rerankTimeoutMs,
      indexes: ctx.searchIndexes,
      queryEmbeddings: ctx.queryEmbeddings,
    }));

  return new Elysia({ prefix: "/knowledge-bases/:kb_id/search" })
    .use(authenticated(ctx))
    .post(
      "",
      async ({ request, params, body, principal }) => {
        const state = requestState(request);
        state.kbId = params.kb_id;
        // Strings are cut (ending in "…") when the summary is stored (request-summary.ts).
        state.requestSummary = {
          query: body.query,
          top_k: body.top_k,
          mode: body.mode,
          rerank: body.rerank,
          filter_keys: Object.keys(body.filter ?? {}),
        };
        assertKnowledgeBaseOwned(ctx.db, principal.account.id, params.kb_id);
        await chargeSearchQuery(ctx.db, principal.account, ctx.clock.now(), ctx.config.limitsEnabled);
        const started = performance.now();
        const data = await searchService().search(params.kb_id, {
          query: body.query,
          topK: body.top_k,
          rerank: body.rerank,
          filter: (body.filter as MetadataFilter | null | undefined) ?? null,
          scoreThreshold: body.score_threshold ?? null,
          includeMetadata: body.include_metadata,
          mode: body.mode,
          alpha: body.alpha,
          keywordQuery: body.keyword_query ?? null,
        });
        ctx.metrics?.observeSearch(body.mode, (performance.now() - started) / 1000);
        state.responseSummary = { result_count: data.results.length };
        return { data };
      },
      {
        params: z.object({ kb_id: prefixedId("kb") }),
        body: SearchBody,
        response: { 200: dataOf(SearchResponseSchema) },
        detail: {
          operationId: "search", summary: "Search a knowledge base",
          description: DESCRIPTION,
          tags: ["Search"],
          responses: meteredErrorResponses(...V1_ERRORS, 404, 503),
        },
      },
    );
}
