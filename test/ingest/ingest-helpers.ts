// Shared by the document/ingestion HTTP tests: a knowledge base to work in, upload helpers, and counts
// of what the store holds for a document (read straight from the server's database), keyword search.
import type { Db } from "../../src/store/db.ts";
import { signup, waitForDocument, type TestAccount, type TestServer } from "../helpers/server.ts";

export interface Workspace {
  account: TestAccount;
  kbId: string;
  docs: string;
}

export async function workspace(server: TestServer, account?: TestAccount): Promise<Workspace> {
  const owner = account ?? (await signup(server));
  const res = await server.request("POST", "/v1/knowledge-bases", { token: owner.apiKey, body: { name: "docs" } });
  if (res.status !== 201) throw new Error(`create kb failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { account: owner, kbId: res.body.data.id, docs: `/v1/knowledge-bases/${res.body.data.id}/documents` };
}

export function addText(server: TestServer, ws: Workspace, body: unknown) {
  return server.request("POST", `${ws.docs}/text`, { token: ws.account.apiKey, body });
}

export function upload(server: TestServer, ws: Workspace, file: Blob, metadata?: string | Blob) {
  return server.request("POST", ws.docs, { token: ws.account.apiKey, form: { file, ...(metadata === undefined ? {} : { metadata }) } });
}

export function replace(server: TestServer, ws: Workspace, docId: string, file: Blob, metadata?: string) {
  return server.request("PUT", `${ws.docs}/${docId}`, { token: ws.account.apiKey, form: { file, ...(metadata === undefined ? {} : { metadata }) } });
}

/** Uploads and waits until the document is ready or failed. */
export async function ingest(server: TestServer, ws: Workspace, file: Blob, metadata?: string) {
  const res = await upload(server, ws, file, metadata);
  if (res.status !== 202) throw new Error(`upload of ${(file as File).name} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return waitForDocument(server, ws.account.apiKey, ws.kbId, res.body.data.id);
}

export async function allChunks(server: TestServer, ws: Workspace, docId: string): Promise<any[]> {
  const chunks: any[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `?limit=100&cursor=${cursor}` : "?limit=100";
    const res = await server.request("GET", `${ws.docs}/${docId}/chunks${query}`, { token: ws.account.apiKey });
    if (res.status !== 200) throw new Error(`chunks failed: ${res.status} ${JSON.stringify(res.body)}`);
    chunks.push(...res.body.data);
    cursor = res.body.meta.cursor;
  } while (cursor);
  return chunks;
}

/** Rows the store holds for a document: its chunks and their vectors. */
export function indexRows(db: Db, docId: string) {
  const count = (sql: string) => db.query<{ n: number }, [string]>(sql).get(docId)!.n;
  return {
    chunks: count("SELECT COUNT(*) AS n FROM chunks WHERE document_id = ?"),
    vectors: count("SELECT COUNT(*) AS n FROM chunk_vectors WHERE rowid IN (SELECT rowid FROM chunks WHERE document_id = ?)"),
  };
}

/** Documents a keyword search of the knowledge base finds (through the API), best first. */
export async function keywordHits(server: TestServer, ws: Workspace, query: string): Promise<string[]> {
  const res = await server.request("POST", `/v1/knowledge-bases/${ws.kbId}/search`, {
    token: ws.account.apiKey,
    body: { query, mode: "keyword", top_k: 50, rerank: false },
  });
  if (res.status !== 200) throw new Error(`keyword search failed: ${res.status} ${JSON.stringify(res.body)}`);
  return [...new Set((res.body.data.results as { document_id: string }[]).map((r) => r.document_id))];
}

/** Total vectors in the whole store (to prove deletes leave nothing behind). */
export function totalVectors(db: Db): number {
  return db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM chunk_vectors").get()!.n;
}

/** Waits until the server's background purger has deleted the vectors of every deleted chunk. */
export async function vectorsPurged(db: Db): Promise<void> {
  const queued = () => db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM vector_purge").get()!.n;
  for (const started = Date.now(); queued() > 0; await Bun.sleep(50)) {
    if (Date.now() - started > 10_000) throw new Error(`${queued()} vectors still queued for deletion after 10 s`);
  }
}
