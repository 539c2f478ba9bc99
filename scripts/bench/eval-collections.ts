// The evaluation collections in ../shared/eval/<name>/ (BEIR layout): corpus.jsonl {_id, title, text},
// queries.jsonl {_id, text}, qrels.tsv (query-id, corpus-id, score; header line).
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const EVAL_DIR = resolve(import.meta.dir, "../../../shared/eval");
export const COLLECTIONS = ["adi", "cisi", "cran", "med", "npl"] as const;

export interface Collection {
  name: string;
  corpus: { id: string; text: string }[];
  queries: { id: string; text: string }[];
  /** query id → corpus id → graded relevance (> 0) */
  qrels: Map<string, Map<string, number>>;
}

function readJsonl<T>(path: string): T[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as T);
}

/** A document's text as ingested: its title first when the text does not already start with it. */
function documentText(title: string | undefined, text: string): string {
  const t = (title ?? "").trim();
  return t && !text.startsWith(t) ? `${t}\n\n${text}` : text;
}

export function loadCollection(name: string): Collection {
  const dir = join(EVAL_DIR, name);
  if (!existsSync(dir)) throw new Error(`No evaluation collection at ${dir} (expected ../shared/eval/ beside the repo)`);
  // Entries without any text (cran has one) cannot be ingested, nor found.
  const corpus = readJsonl<{ _id: string; title?: string; text: string }>(join(dir, "corpus.jsonl"))
    .map((d) => ({ id: String(d._id), text: documentText(d.title, d.text) }))
    .filter((d) => d.text.trim().length > 0);
  const queries = readJsonl<{ _id: string; text: string }>(join(dir, "queries.jsonl")).map((q) => ({ id: String(q._id), text: q.text }));
  const qrels = new Map<string, Map<string, number>>();
  for (const line of readFileSync(join(dir, "qrels.tsv"), "utf8").split("\n").slice(1)) {
    const [queryId, corpusId, score] = line.trim().split("\t");
    if (!queryId || !corpusId || !(Number(score) > 0)) continue;
    if (!qrels.has(queryId)) qrels.set(queryId, new Map());
    qrels.get(queryId)!.set(corpusId, Number(score));
  }
  return { name, corpus, queries: queries.filter((q) => qrels.has(q.id)), qrels };
}
