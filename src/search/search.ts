// Search within one knowledge base (spec 4.4): retrieve by vector, keyword or both (fused), rerank the
// best candidates when a reranker is installed, apply the score threshold, return top_k with metadata.
import type { Db } from "../store/db.ts";
import type { SearchModels } from "../models/types.ts";
import { QuarryError } from "../errors.ts";
import { INVISIBLE_NOT_JOINERS } from "../characters.ts";
import { parseJsonObject } from "../store/json.ts";
import type { IndexCache } from "./index-cache.ts";
import type { RowidHit } from "./rowid-hit.ts";
import { compileFilter, type MetadataFilter } from "./filters.ts";
import { fuseRankings } from "./fusion.ts";
import { keywordScore, vectorScore } from "./scores.ts";
import { rerankPool, rerankScores } from "./rerank.ts";
import { loadChunkHits, type ChunkHit } from "./hits.ts";
import { nextSearch } from "./search-order.ts";
import type { QueryEmbedding, QueryEmbeddingCache } from "./query-embeddings.ts";

export const SEARCH_MODES = ["vector", "keyword", "hybrid"] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

/** In hybrid mode each side contributes at least this many ranked chunks to the fusion. */
export const HYBRID_SIDE_DEPTH = 100;

export interface SearchRequest {
  query: string;
  topK: number;
  rerank: boolean;
  filter: MetadataFilter | null;
  scoreThreshold: number | null;
  includeMetadata: boolean;
  mode: SearchMode;
  /** Weight of the vector side in hybrid mode (0 keyword only … 1 vector only). */
  alpha: number;
  /** Text for the keyword side in keyword and hybrid modes; the query when null. */
  keywordQuery: string | null;
}

export interface SearchResult {
  chunk_id: string;
  document_id: string;
  document_name: string;
  text: string;
  score: number;
  metadata?: { chunk_index: number; start_page: number | null; end_page: number; section_heading: string };
  document_metadata?: Record<string, unknown>;
}

export interface SearchUsage {
  embedding_tokens: number;
  rerank_applied: boolean;
  rerank_calls: number;
  chunks_searched: number;
  search_mode: SearchMode;
}

export interface SearchResponse {
  query: string;
  results: SearchResult[];
  usage: SearchUsage;
}

interface Candidate {
  hit: ChunkHit;
  score: number;
}

export interface SearchDeps {
  db: Db;
  models: SearchModels;
  rerankTimeoutMs: number;
  indexes: IndexCache;
  queryEmbeddings: QueryEmbeddingCache;
}

export class SearchService {
  constructor(private readonly deps: SearchDeps) {}

  async search(kbId: string, request: SearchRequest): Promise<SearchResponse> {
    const predicate = request.filter ? compileFilter(request.filter) : null;
    const reranker = request.rerank ? this.deps.models.reranker : null;
    const depth = reranker ? rerankPool(request.topK) : request.topK;
    const sideDepth = request.mode === "hybrid" ? Math.max(depth, HYBRID_SIDE_DEPTH) : depth;
    const usage: SearchUsage = { embedding_tokens: 0, rerank_applied: false, rerank_calls: 0, chunks_searched: 0, search_mode: request.mode };

    // The keyword side runs on the search threads while the query is embedded on the model's threads;
    // the vector side follows on the search threads once the query is embedded, ahead of newer searches'
    // tasks (search-order.ts). In hybrid mode each side has its own share of the search threads.
    // Eligibility is by chunk rowid, so it stays valid across the embedding await: computed once.
    let index = this.deps.indexes.get(kbId);
    await index.caughtUp();
    const scope = await index.eligibility(predicate, request.filter ? JSON.stringify(request.filter) : undefined);
    // A first load of the documents lets other requests run, which may let this index go under the memory budget.
    if (index.closed) index = this.deps.indexes.get(kbId);
    usage.chunks_searched = scope.count;
    // Hybrid with alpha 0 (keyword only) or 1 (vector only) gives the other side no weight: it is not run,
    // so alpha 0 makes no embedding call. The fused ranking is the same either way.
    const keyword = request.mode === "keyword" || (request.mode === "hybrid" && request.alpha < 1);
    const vector = request.mode === "vector" || (request.mode === "hybrid" && request.alpha > 0);
    const side = nextSearch(keyword && vector);
    const keywordSide: Promise<RowidHit[]> = keyword ? index.keywordSearch(request.keywordQuery ?? request.query, scope, sideDepth, side) : Promise.resolve([]);
    const vectorSide: Promise<RowidHit[]> =
      !vector
        ? Promise.resolve([])
        : this.embedQuery(kbId, request.query).then(({ vector, tokens }) => {
            usage.embedding_tokens = tokens;
            // Meanwhile the index may have taken a new segment (it searches its newest), or been let go under
            // the memory budget (a new one is then opened). Chunks logged meanwhile wait for the next search, as
            // for the keyword side: reading the log again cost two queries a search.
            return (index.closed ? this.deps.indexes.get(kbId) : index).vectorSearch(vector, scope, sideDepth, side);
          });
    // Both settle before a failure is reported (the embedding's first), so that no rejection goes unhandled.
    const [vectorResult, keywordResult] = await Promise.allSettled([vectorSide, keywordSide]);
    if (vectorResult.status === "rejected") throw vectorResult.reason;
    if (keywordResult.status === "rejected") throw keywordResult.reason;
    const [vectorHits, keywordHits] = [vectorResult.value, keywordResult.value];

    const ranked =
      request.mode === "hybrid"
        ? fuseRankings(vectorHits, keywordHits, request.alpha, depth)
        : request.mode === "vector"
          ? vectorHits.map((hit) => ({ rowid: hit.rowid, score: vectorScore(hit.score) }))
          : keywordHits.map((hit) => ({ rowid: hit.rowid, score: keywordScore(hit.score) }));
    const rows = loadChunkHits(this.deps.db, kbId, ranked.map((hit) => hit.rowid));
    // The filter again, on the metadata the results show: it may have changed (a PATCH) since eligibility
    // was worked out, before the embedding was awaited, and a result must never contradict its filter.
    const shown = (hit: ChunkHit | undefined): hit is ChunkHit => hit !== undefined && (predicate === null || predicate(parseJsonObject(hit.document_metadata)));
    let candidates: Candidate[] = ranked.flatMap((h) => {
      const hit = rows.get(h.rowid);
      return shown(hit) ? [{ hit, score: h.score }] : [];
    });

    if (reranker && candidates.length > 0) {
      const scores = await rerankScores(reranker, request.query, candidates.map((c) => c.hit.text), this.deps.rerankTimeoutMs);
      if (scores) {
        candidates = candidates.map((c, i) => ({ hit: c.hit, score: scores[i] })).sort((a, b) => b.score - a.score);
        usage.rerank_applied = true;
        usage.rerank_calls = 1;
      }
    }

    const threshold = request.scoreThreshold;
    const results = candidates
      .filter((c) => threshold === null || c.score >= threshold)
      .slice(0, request.topK)
      .map((c) => toResult(c, request.includeMetadata));
    return { query: request.query, results, usage };
  }

  private async embedQuery(kbId: string, query: string): Promise<QueryEmbedding> {
    // Cleaned as the documents' text was: a soft hyphen pasted with the query changed its embedding.
    const text = query.replace(INVISIBLE_NOT_JOINERS, "");
    try {
      return await this.deps.queryEmbeddings.get(kbId, text, () => this.deps.models.embedder.embed([text], "query"));
    } catch (error) {
      throw new QuarryError("EXTERNAL_SERVICE_ERROR", `The embedding model could not embed the query: ${(error as Error).message}`);
    }
  }
}

function toResult({ hit, score }: Candidate, includeMetadata: boolean): SearchResult {
  const result: SearchResult = {
    chunk_id: hit.chunk_id,
    document_id: hit.document_id,
    document_name: hit.document_name,
    text: hit.text,
    score,
  };
  if (includeMetadata) {
    result.metadata = { chunk_index: hit.chunk_index, start_page: hit.start_page, end_page: hit.end_page, section_heading: hit.section_heading };
    result.document_metadata = parseJsonObject(hit.document_metadata);
  }
  return result;
}
