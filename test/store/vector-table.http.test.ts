// Every knowledge base's vectors share one sqlite-vec table (store/vectors.ts): small knowledge bases no
// longer take a 512 KB blob each. A data dir from an earlier version, whose table (vec_chunks) was
// partitioned by knowledge base, is moved into it at start, vectors and search results unchanged.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { openDatabase, type Db } from "../../src/store/db.ts";
import { addDocs, createKb, search, type SearchKb } from "../search/search-helpers.ts";

const dataDir = mkdtempSync(join(tmpdir(), "quarry-vector-table-"));
let server: TestServer | null = null;
afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const blobs = (db: Db, table: string) => db.query<{ n: number }, []>(`SELECT COUNT(*) AS n FROM ${table}_vector_chunks00`).get()!.n;
const tables = (db: Db) => db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE name IN ('vec_chunks', 'chunk_vectors') ORDER BY name").all().map((t) => t.name);
const base64 = (vectors: { rowid: number; embedding: Uint8Array }[]) => vectors.map((v) => [v.rowid, Buffer.from(v.embedding).toString("base64")]);

test("twelve one-document knowledge bases keep their vectors in one blob, not one each", async () => {
  server = await startTestServer({ dataDir, env: { QUARRY_LIMITS: "off" } });
  const kbs: SearchKb[] = [];
  for (let i = 0; i < 12; i++) {
    const kb = await createKb(server);
    await addDocs(server, kb, [{ name: `note-${i}`, text: `Harbour log ${i}: the ferry left pier ${i} at dawn.` }]);
    kbs.push(kb);
  }
  expect(tables(server.server.ctx.db)).toEqual(["chunk_vectors"]);
  expect(blobs(server.server.ctx.db, "chunk_vectors")).toBe(1);
  const found = await search(server, kbs[7], { query: "ferry pier", mode: "vector", top_k: 3 });
  expect(found.results.map((r) => r.document_id)).toEqual([kbs[7].docs["note-7"]]);
});

test("an earlier version's table, partitioned by knowledge base, is moved into the shared one at start", async () => {
  const kb = await createKb(server!);
  await addDocs(server!, kb, [
    { name: "volcano", text: "The volcano erupted and lava flowed down the mountain side into the valley." },
    { name: "bread", text: "Knead the bread dough, let it rise, then bake it in a hot oven until golden." },
  ]);
  const before = await search(server!, kb, { query: "baking a loaf", mode: "vector", top_k: 5 });
  await server!.stop();
  server = null;

  // Lay the vectors out as an earlier version did: in vec_chunks, a partition (and a blob) per knowledge base.
  const db = openDatabase(join(dataDir, "quarry.db"), { migrate: false });
  const vectors = db.query<{ rowid: number; embedding: Uint8Array }, []>("SELECT rowid, embedding FROM chunk_vectors ORDER BY rowid").all();
  db.transaction(() => {
    db.exec("DROP TABLE chunk_vectors");
    db.exec("CREATE VIRTUAL TABLE vec_chunks USING vec0(kb_id TEXT PARTITION KEY, embedding FLOAT[512] distance_metric=cosine, chunk_size=1024)");
    const insert = db.query("INSERT INTO vec_chunks (rowid, kb_id, embedding) VALUES (?, (SELECT kb_id FROM chunks WHERE rowid = ?), ?)");
    for (const { rowid, embedding } of vectors) insert.run(rowid, rowid, embedding);
  })();
  expect(blobs(db, "vec_chunks")).toBe(13);
  db.close();

  server = await startTestServer({ dataDir, env: { QUARRY_LIMITS: "off" } });
  const after = server.server.ctx.db;
  expect(tables(after)).toEqual(["chunk_vectors"]);
  expect(blobs(after, "chunk_vectors")).toBe(1);
  expect(base64(after.query<{ rowid: number; embedding: Uint8Array }, []>("SELECT rowid, embedding FROM chunk_vectors ORDER BY rowid").all())).toEqual(base64(vectors));
  expect(await search(server, kb, { query: "baking a loaf", mode: "vector", top_k: 5 })).toEqual(before);
});
