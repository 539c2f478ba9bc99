// One document through the pipeline, inside an ingestion worker: parse (in the worker's parser process)
// → chunk → embed → index, moving the status along (pending → parsing → chunking → embedding → ready) or
// to failed with a message the user can act on. Every step is a guarded transition, so a document deleted
// meanwhile is simply dropped (at once, when the worker is told: see Cancelled).
import { join } from "node:path";
import type { Db } from "../store/db.ts";
import type { Clock } from "../clock.ts";
import type { Embedder } from "../models/types.ts";
import { QuarryError } from "../errors.ts";
import { isOutOfSpace } from "../file-errors.ts";
import { findDocumentRow, transitionStatus, type DocumentStatus } from "../store/documents.ts";
import type { NewChunk } from "../store/chunks.ts";
import { assertPageLimit, ParseError, type ParsedDocument } from "./parsers/index.ts";
import { chunkDocument } from "./chunker.ts";
import { ParserKilled } from "./parse-process.ts";
import { assertDocumentPagesFit, completeDocument, failDocumentInSlices, pageAllowance } from "./indexer.ts";
import type { PageAllowance } from "./parsers/page-limit.ts";

/** Chunk size cap in tokens; lower when the embedding model reads fewer tokens. */
const MAX_CHUNK_TOKENS = 512;
/** Texts per embedding call: large enough to batch well, small enough to notice a stop request soon. */
const EMBED_BATCH = 32;

export interface PipelineDeps {
  db: Db;
  dataDir: string;
  embedder: Embedder;
  clock: Clock;
  limitsEnabled: boolean;
  /**
   * Aborted with an Interrupted when the worker is stopping, or a Cancelled when the document was deleted;
   * checked between steps and embedding batches, and it stops a parse at once.
   */
  signal: AbortSignal;
  /** Parses the stored file (at an absolute path) out of process; see parse-process.ts. */
  parse(path: string, fileType: string, fileName: string, signal: AbortSignal, allowance: PageAllowance | null): Promise<ParsedDocument>;
  /** Vectors for a batch from an idle worker, or null when none is free. */
  embedElsewhere(texts: string[]): Promise<Float32Array[] | null>;
}

/** Milliseconds per step, and the amounts processed; reported to whoever watches the queue (benchmarks). */
export interface PipelineReport {
  documentId: string;
  /** The document's knowledge base (null when the document was gone before its processing began). */
  kbId: string | null;
  /** dropped: deleted while processing, noticed at a step; cancelled: its processing was stopped the moment it was deleted. */
  outcome: "ready" | "failed" | "dropped" | "cancelled";
  errorDetail?: string;
  pages: number | null;
  chunks: number;
  ms: { parse: number; chunk: number; embed: number; index: number };
}

/** Thrown at a checkpoint when the worker is stopping; the job goes back in line untouched. */
export class Interrupted extends Error {
  override name = "Interrupted";
}

/** The document was deleted while it was processed: its work is abandoned. */
export class Cancelled extends Error {
  override name = "Cancelled";
}

class Dropped extends Error {}

export async function processDocument(deps: PipelineDeps, documentId: string): Promise<PipelineReport> {
  const report: PipelineReport = { documentId, kbId: null, outcome: "dropped", pages: null, chunks: 0, ms: { parse: 0, chunk: 0, embed: 0, index: 0 } };
  const checkpoint = () => deps.signal.throwIfAborted();
  const advance = (from: DocumentStatus, to: DocumentStatus, pageCount?: number | null) => {
    checkpoint();
    if (!transitionStatus(deps.db, documentId, from, to, deps.clock.now(), { pageCount })) throw new Dropped();
  };
  const timed = async <T>(step: keyof PipelineReport["ms"], work: () => T | Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await work();
    } finally {
      report.ms[step] += performance.now() - started;
    }
  };

  /** The page count parsing found. */
  let parsedPages: number | null = null;
  try {
    const document = findDocumentRow(deps.db, documentId);
    if (!document?.storage_path) return report;
    report.kbId = document.kb_id;
    advance("pending", "parsing");
    const path = join(deps.dataDir, document.storage_path);
    const allowance = pageAllowance(deps.db, document.account_id, deps.clock.now(), deps.limitsEnabled);
    const parsed = await timed("parse", () => deps.parse(path, document.file_type, document.name, deps.signal, allowance));
    parsedPages = parsed.pageCount;
    if (parsed.pageCount !== null) assertPageLimit(parsed.pageCount);
    assertDocumentPagesFit(deps.db, documentId, parsed.pageCount, deps.clock.now(), deps.limitsEnabled);
    report.pages = parsed.pageCount;
    advance("parsing", "chunking", parsed.pageCount);
    const { embedder } = deps;
    const drafts = await timed("chunk", () =>
      chunkDocument(parsed, (text) => embedder.countTokens(text), { maxTokens: Math.min(MAX_CHUNK_TOKENS, embedder.maxTokens) }),
    );
    if (drafts.length === 0) throw new ParseError("No text could be extracted from this file");
    advance("chunking", "embedding");
    const vectors = await timed("embed", () => embedPassages(deps, drafts.map((d) => d.text), checkpoint));
    // Text formats have no pages; their chunks end on page 1 (the API's end_page is always an integer).
    const chunks: NewChunk[] = drafts.map((draft, i) => ({ ...draft, endPage: draft.endPage ?? 1, embedding: vectors[i] }));
    checkpoint();
    const indexed = await timed("index", () =>
      completeDocument(deps.db, documentId, parsed.pageCount, chunks, deps.clock.now(), deps.limitsEnabled),
    );
    if (!indexed) return report;
    return { ...report, outcome: "ready", chunks: chunks.length };
  } catch (error) {
    if (error instanceof Dropped) return report;
    if (error instanceof Cancelled) return { ...report, outcome: "cancelled" };
    if (error instanceof Interrupted || error instanceof ParserKilled) throw error;
    const detail = failureMessage(error);
    // A document deleted meanwhile (its file gone mid-read, say) is dropped without a word.
    // A page-allowance overrun found after parsing keeps the page count, as one the parser found does.
    const overrun = error instanceof QuarryError && error.code === "USAGE_LIMIT_EXCEEDED";
    const pageCount = error instanceof ParseError ? error.pageCount : overrun ? parsedPages : null;
    if (!(await failDocumentInSlices(deps.db, documentId, detail, deps.clock.now(), pageCount))) return report;
    const cause = error instanceof ParseError ? error.cause : error instanceof QuarryError ? undefined : error;
    if (cause) console.error(`Ingestion of ${documentId} failed:`, cause);
    return { ...report, outcome: "failed", errorDetail: detail };
  }
}

/**
 * Embeds in rounds of two batches: one here, one on an idle worker when there is one (otherwise here
 * too), so a single large document is embedded on every core the pool has free.
 */
async function embedPassages(deps: PipelineDeps, texts: string[], checkpoint: () => void): Promise<Float32Array[]> {
  const embedHere = async (batch: string[]) => (batch.length === 0 ? [] : (await deps.embedder.embed(batch, "passage")).vectors);
  const vectors: Float32Array[] = [];
  for (let start = 0; start < texts.length; start += 2 * EMBED_BATCH) {
    checkpoint();
    const mine = texts.slice(start, start + EMBED_BATCH);
    const theirs = texts.slice(start + EMBED_BATCH, start + 2 * EMBED_BATCH);
    // Ask first: inference blocks this thread while it runs, so the request must be out before it starts.
    const shared = theirs.length === 0 ? Promise.resolve([]) : deps.embedElsewhere(theirs);
    const own = await embedHere(mine);
    vectors.push(...own, ...((await shared) ?? (await embedHere(theirs))));
  }
  return vectors;
}

/** What the user reads in error_detail: parser and limit messages as they are, anything else prefixed. */
function failureMessage(error: unknown): string {
  if (error instanceof ParseError || error instanceof QuarryError) return error.message;
  // The document is not at fault: said so, with what to do.
  if (isOutOfSpace(error)) return "Processing failed: the server ran out of disk space. Replace the document (PUT) to process it again once space is freed";
  const message = error instanceof Error ? error.message : String(error);
  return `Processing failed: ${message}`;
}
