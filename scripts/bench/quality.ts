// Retrieval quality on the evaluation collections (../shared/eval): each corpus entry is ingested as one
// text document (its id in metadata) through the real API of an in-process server, every judged query is
// run, and nDCG@10 and Recall@100 are printed for keyword, vector, hybrid (alpha 0.6) and the best alpha.
//
//   npm run bench:quality                      all collections, fresh temporary data dir
//   bun scripts/bench/quality.ts cran med      some collections
//   QUALITY_DATA_DIR=/tmp/q npm run bench:quality   keep the ingested collections there and reuse them
//
// Queries go to the same SearchService the route uses, called in-process: Recall@100 needs more results
// than the API's top_k cap of 50. Documents are ranked by their best chunk. No reranker (none ships).
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { signup, startTestServer, type TestServer } from "../../test/helpers/server.ts";
import { SearchService, type SearchMode } from "../../src/search/search.ts";
import { COLLECTIONS, loadCollection, type Collection } from "./eval-collections.ts";

const ALPHAS = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1];
/** Chunks asked for per query: enough to rank 100 distinct documents. */
const CHUNK_DEPTH = 400;
const IN_FLIGHT = 16;

interface Metrics {
  ndcg10: number;
  recall100: number;
}

function ndcgAt10(ranked: string[], judged: Map<string, number>): number {
  let dcg = 0;
  ranked.slice(0, 10).forEach((id, i) => (dcg += (judged.get(id) ?? 0) / Math.log2(i + 2)));
  const ideal = [...judged.values()].sort((a, b) => b - a).slice(0, 10);
  const idcg = ideal.reduce((sum, gain, i) => sum + gain / Math.log2(i + 2), 0);
  return idcg > 0 ? dcg / idcg : 0;
}

function recallAt100(ranked: string[], judged: Map<string, number>): number {
  return ranked.slice(0, 100).filter((id) => judged.has(id)).length / judged.size;
}

/** Ingests the collection into a knowledge base named eval-<name>, or finds it already there. */
async function ingested(server: TestServer, apiKey: string, collection: Collection): Promise<string> {
  const db = server.server.ctx.db;
  const name = `eval-${collection.name}`;
  const existing = db
    .query<{ id: string; ready: number }, [string]>(
      `SELECT k.id, (SELECT COUNT(*) FROM documents d WHERE d.kb_id = k.id AND d.status = 'ready') AS ready
       FROM knowledge_bases k WHERE k.name = ?`,
    )
    .get(name);
  if (existing && existing.ready === collection.corpus.length) return existing.id;
  if (existing) await server.request("DELETE", `/v1/knowledge-bases/${existing.id}`, { token: apiKey });
  const kb = await server.request("POST", "/v1/knowledge-bases", { token: apiKey, body: { name } });
  const kbId: string = kb.body.data.id;
  const started = performance.now();
  let next = 0;
  const submit = async () => {
    while (next < collection.corpus.length) {
      const doc = collection.corpus[next++];
      const res = await server.request("POST", `/v1/knowledge-bases/${kbId}/documents/text`, {
        token: apiKey,
        body: { text: doc.text, name: `${collection.name}-${doc.id}.txt`, metadata: { corpus_id: doc.id } },
      });
      if (res.status !== 202) throw new Error(`ingest ${doc.id}: ${res.status} ${JSON.stringify(res.body)}`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, submit));
  const done = db.query<{ n: number; failed: number }, [string]>(
    "SELECT COUNT(*) AS n, SUM(status = 'failed') AS failed FROM documents WHERE kb_id = ? AND status IN ('ready', 'failed')",
  );
  for (;;) {
    const { n, failed } = done.get(kbId)!;
    if (n === collection.corpus.length) {
      if (failed) throw new Error(`${failed} documents of ${collection.name} failed`);
      break;
    }
    await Bun.sleep(500);
  }
  const chunks = db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM chunks WHERE kb_id = ?").get(kbId)!.n;
  console.error(`${collection.name}: ingested ${collection.corpus.length} documents (${chunks} chunks) in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  return kbId;
}

async function evaluate(service: SearchService, kbId: string, collection: Collection, mode: SearchMode, alpha = 0.6): Promise<Metrics> {
  let ndcg = 0;
  let recall = 0;
  for (const query of collection.queries) {
    const { results } = await service.search(kbId, {
      query: query.text,
      topK: CHUNK_DEPTH,
      rerank: false,
      filter: null,
      scoreThreshold: null,
      includeMetadata: true,
      mode,
      alpha,
      keywordQuery: null,
    });
    const ranked = [...new Set(results.map((r) => String(r.document_metadata!.corpus_id)))];
    const judged = collection.qrels.get(query.id)!;
    ndcg += ndcgAt10(ranked, judged);
    recall += recallAt100(ranked, judged);
  }
  const n = collection.queries.length;
  return { ndcg10: ndcg / n, recall100: recall / n };
}

const fmt = (m: Metrics) => `${m.ndcg10.toFixed(3)} / ${m.recall100.toFixed(3)}`;

async function main() {
  const names = process.argv.slice(2).length > 0 ? process.argv.slice(2) : [...COLLECTIONS];
  const keep = process.env.QUALITY_DATA_DIR;
  const dataDir = keep ?? mkdtempSync(join(tmpdir(), "quarry-quality-"));
  mkdirSync(dataDir, { recursive: true });
  const server = await startTestServer({ dataDir, env: { QUARRY_LIMITS: "off", QUARRY_WORKERS: "2" } });
  try {
    const ctx = server.server.ctx;
    const account = ctx.db.query<{ id: string }, []>("SELECT id FROM accounts WHERE email = 'quality@bench.local'").get()
      ? null
      : await signup(server, "quality@bench.local");
    const apiKey = account?.apiKey ?? (await regenerateKey(server));
    const service = new SearchService({
      db: ctx.db,
      models: ctx.models,
      rerankTimeoutMs: ctx.config.rerankTimeoutMs,
      indexes: ctx.searchIndexes,
      queryEmbeddings: ctx.queryEmbeddings,
    });
    console.log("nDCG@10 / Recall@100 per collection (documents ranked by their best chunk)\n");
    console.log("| collection | queries | keyword | vector | hybrid α=0.6 | best α | hybrid best α |");
    console.log("|---|---|---|---|---|---|---|");
    for (const name of names) {
      const collection = loadCollection(name);
      const kbId = await ingested(server, apiKey, collection);
      const keyword = await evaluate(service, kbId, collection, "keyword");
      const vector = await evaluate(service, kbId, collection, "vector");
      let best = { alpha: 0.6, metrics: await evaluate(service, kbId, collection, "hybrid", 0.6) };
      const hybrid = best.metrics;
      for (const alpha of ALPHAS) {
        if (alpha === 0.6) continue;
        const metrics = await evaluate(service, kbId, collection, "hybrid", alpha);
        if (metrics.ndcg10 > best.metrics.ndcg10) best = { alpha, metrics };
      }
      console.log(
        `| ${name} | ${collection.queries.length} | ${fmt(keyword)} | ${fmt(vector)} | ${fmt(hybrid)} | ${best.alpha} | ${fmt(best.metrics)} |`,
      );
    }
  } finally {
    await server.stop();
    if (!keep) rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A reused data dir: the bench account exists; log in (test helper password) and mint a new API key. */
async function regenerateKey(server: TestServer): Promise<string> {
  const login = await server.request("POST", "/auth/login", { body: { email: "quality@bench.local", password: "correct horse battery" } });
  const res = await server.request("POST", "/auth/api-key/regenerate", { token: login.body.data.token });
  return res.body.data.api_key;
}

await main();
