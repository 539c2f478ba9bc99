// The on-disk search segments (search/index-worker.ts, kb-index.ts): with a low build threshold the index
// worker folds a knowledge base into a segment; searches then read the segment plus the changes since
// (deletions hidden, additions found), answer the same after a restart without rebuilding, and survive
// the segment folder being lost or written in an older format. All through the HTTP API with the real model.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SEGMENT_FORMAT } from "../../src/search/segment-files.ts";
import { openDatabase, type Db } from "../../src/store/db.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addDocs, createKb, docNames, search, segments, TOPICS, waitForSegment, type SearchKb, type TextDoc } from "./search-helpers.ts";

const ENV = { QUARRY_SEGMENT_MIN_CHANGES: "5", QUARRY_LIMITS: "off" };
const FILLERS: TextDoc[] = [
  "Lighthouses guide ships along rocky coasts with rotating lamps and foghorns.",
  "A violin has four strings tuned in fifths and is played with a horsehair bow.",
  "Honeybees communicate the direction of flowers through a waggle dance in the hive.",
  "Marathon runners train for months, building endurance with long slow runs.",
  "Chess openings such as the Sicilian Defence shape the middlegame battle.",
  "Origami folds a single square of paper into cranes, boxes and flowers.",
  "Submarines dive by flooding ballast tanks and surface by blowing them with air.",
].map((text, i) => ({ name: `filler-${i}`, text }));

let dataDir: string;
let server: TestServer;
let kb: SearchKb;

async function restart(): Promise<void> {
  await server.stop();
  server = await startTestServer({ dataDir, env: ENV });
}

/** Result chunk ids of a few queries in every mode, filtered and not. */
async function snapshot(): Promise<string[][]> {
  const out: string[][] = [];
  for (const mode of ["vector", "keyword", "hybrid"]) {
    for (const query of ["volcano eruption lava", "bread dough oven", "ships at sea"]) {
      for (const filter of [undefined, { topic: { $eq: "geology" } }]) {
        const data = await search(server, kb, { query, mode, filter, top_k: 5, rerank: false });
        out.push(data.results.map((r) => r.chunk_id));
      }
    }
  }
  return out;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "quarry-segments-"));
  server = await startTestServer({ dataDir, env: ENV });
  kb = await createKb(server);
  await addDocs(server, kb, [...TOPICS, ...FILLERS]);
  await waitForSegment(dataDir, kb.kbId);
});

afterAll(async () => {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test("a knowledge base folded into a segment is searched in every mode, with filters", async () => {
  for (const mode of ["vector", "keyword", "hybrid"]) {
    const data = await search(server, kb, { query: "volcano eruption lava", mode, rerank: false });
    expect(docNames(kb, data.results)[0]).toBe("volcano");
    expect(data.usage.chunks_searched).toBe(12);
    const filtered = await search(server, kb, { query: "golden crust", mode, rerank: false, filter: { topic: { $eq: "geology" } } });
    expect(docNames(kb, filtered.results)).toEqual(["volcano"]);
    expect(filtered.usage.chunks_searched).toBe(1);
  }
});

test("a hybrid search's sides, each on its own search threads, rank as the modes alone: alpha near 1 as vector, near 0 as keyword", async () => {
  // (Alpha 0 or 1 runs one side only.) A side weighted 1e-6 only orders the chunks the other side left out,
  // after its own: a rank step weighs at least 61/159 − 61/160 ≈ 0.0024.
  for (const query of ["volcano eruption lava", "bread dough oven", "ships at sea"]) {
    const ids = async (body: Record<string, unknown>) => (await search(server, kb, { query, top_k: 10, rerank: false, ...body })).results.map((r) => r.chunk_id);
    expect(await ids({ mode: "hybrid", alpha: 1 - 1e-6 })).toEqual(await ids({ mode: "vector" }));
    const keyword = await ids({ mode: "keyword" });
    expect(keyword.length).toBeGreaterThan(0);
    expect((await ids({ mode: "hybrid", alpha: 1e-6 })).slice(0, keyword.length)).toEqual(keyword);
  }
});

test("deleted documents disappear from the segment's results; new ones are found beside it", async () => {
  const before = segments(dataDir, kb.kbId);
  const del = await server.request("DELETE", `/v1/knowledge-bases/${kb.kbId}/documents/${kb.docs.baking}`, { token: kb.account.apiKey });
  expect(del.status).toBe(200);
  await addDocs(server, kb, [{ name: "glacier", text: "Glaciers carve valleys as the ice slowly flows downhill under its own weight." }]);
  for (const mode of ["vector", "keyword", "hybrid"]) {
    const bread = await search(server, kb, { query: "sourdough bread dough oven", mode, rerank: false, top_k: 50 });
    expect(docNames(kb, bread.results)).not.toContain("baking");
    expect(bread.usage.chunks_searched).toBe(12);
    const ice = await search(server, kb, { query: "glaciers carve valleys of ice", mode, rerank: false });
    expect(docNames(kb, ice.results)[0]).toBe("glacier");
  }
  // Two changes stay below the build threshold: the same segment still serves, with the changes in memory.
  expect(segments(dataDir, kb.kbId)).toEqual(before);
});

test("more changes fold into a newer segment, built on the previous one, with deletions and additions", async () => {
  const first = segments(dataDir, kb.kbId).at(-1)!;
  const del = await server.request("DELETE", `/v1/knowledge-bases/${kb.kbId}/documents/${kb.docs["filler-0"]}`, { token: kb.account.apiKey });
  expect(del.status).toBe(200);
  const more = ["Tides", "Comets", "Geysers", "Dunes", "Fjords"].map((name) => ({
    name: name.toLowerCase(),
    text: `${name} are a natural wonder; ${name.toLowerCase()} draw visitors from around the world every summer.`,
  }));
  await addDocs(server, kb, more);
  for (let waited = 0; waited < 60_000 && segments(dataDir, kb.kbId).at(-1) === first; waited += 200) await Bun.sleep(200);
  expect(Number(segments(dataDir, kb.kbId).at(-1))).toBeGreaterThan(Number(first));
  for (const mode of ["vector", "keyword", "hybrid"]) {
    const comets = await search(server, kb, { query: "comets natural wonder", mode, rerank: false, top_k: 50 });
    expect(docNames(kb, comets.results)[0]).toBe("comets");
    expect(docNames(kb, comets.results)).not.toContain("filler-0");
    expect(docNames(kb, comets.results)).not.toContain("baking");
    expect(comets.usage.chunks_searched).toBe(16);
    const ice = await search(server, kb, { query: "glaciers carve valleys of ice", mode, rerank: false });
    expect(docNames(kb, ice.results)[0]).toBe("glacier");
  }
});

test("after a restart the same searches give the same results, from the same segment", async () => {
  const before = await snapshot();
  const built = segments(dataDir, kb.kbId);
  await restart();
  expect(await snapshot()).toEqual(before);
  expect(segments(dataDir, kb.kbId)).toEqual(built);
});

test("a restart after a stop that cut short a segment's log trim finishes the trim and builds nothing", async () => {
  const before = await snapshot();
  const folders = segments(dataDir, kb.kbId);
  const newest = folders.at(-1)!;
  const manifest = () => readFileSync(join(dataDir, "indexes", kb.kbId, newest, "manifest.json"), "utf8");
  const built = manifest();
  const watermark = JSON.parse(built).watermark as number;
  await server.stop();
  // What the stop left: log rows the segment holds (seq <= watermark), one per chunk of the knowledge base.
  const db = openDatabase(join(dataDir, "quarry.db"), { migrate: false });
  const used = new Set(db.query<{ seq: number }, []>("SELECT seq FROM search_log").all().map((row) => row.seq));
  const chunks = db.query<{ rowid: number }, [string]>("SELECT rowid FROM chunks WHERE kb_id = ?").all(kb.kbId);
  const free = Array.from({ length: watermark }, (_, i) => i + 1).filter((seq) => !used.has(seq));
  expect(free.length).toBeGreaterThanOrEqual(chunks.length);
  const log = db.query("INSERT INTO search_log (seq, kb_id, chunk_rowid, added) VALUES (?, ?, ?, 1)");
  db.transaction(() => chunks.forEach(({ rowid }, i) => log.run(free[i], kb.kbId, rowid)))();
  db.close();
  const heldRows = (d: Db) => d.query<{ n: number }, [string, number]>("SELECT COUNT(*) AS n FROM search_log WHERE kb_id = ? AND seq <= ?").get(kb.kbId, watermark)!.n;

  server = await startTestServer({ dataDir, env: ENV });
  for (let waited = 0; waited < 10_000 && heldRows(server.server.ctx.db) > 0; waited += 100) await Bun.sleep(100);
  expect(heldRows(server.server.ctx.db)).toBe(0);
  // Stopping waits for the index worker's first check, which would have rebuilt the segment.
  await restart();
  expect(segments(dataDir, kb.kbId)).toEqual(folders);
  expect(manifest()).toBe(built);
  expect(await snapshot()).toEqual(before);
});

test("a lost segment folder is rebuilt from the database: nothing goes missing", async () => {
  const before = await snapshot();
  await server.stop();
  rmSync(join(dataDir, "indexes"), { recursive: true, force: true });
  server = await startTestServer({ dataDir, env: ENV });
  expect(await snapshot()).toEqual(before);
  await waitForSegment(dataDir, kb.kbId);
  expect(await snapshot()).toEqual(before);
});

test("a segment of an older format (format 1: an HNSW graph) is rebuilt after an upgrade", async () => {
  const before = await snapshot();
  await server.stop();
  const old = join(dataDir, "indexes", kb.kbId, segments(dataDir, kb.kbId).at(-1)!);
  const { format: _, ...manifest } = JSON.parse(readFileSync(join(old, "manifest.json"), "utf8"));
  writeFileSync(join(old, "manifest.json"), JSON.stringify(manifest));
  rmSync(join(old, "vector"), { recursive: true });
  server = await startTestServer({ dataDir, env: ENV });
  expect(await snapshot()).toEqual(before);
  await waitForSegment(dataDir, kb.kbId);
  const rebuilt = join(dataDir, "indexes", kb.kbId, segments(dataDir, kb.kbId).at(-1)!);
  expect(JSON.parse(readFileSync(join(rebuilt, "manifest.json"), "utf8")).format).toBe(SEGMENT_FORMAT);
  expect(await snapshot()).toEqual(before);
});

test("a deleted knowledge base's segments and search log are removed, without a restart", async () => {
  expect(existsSync(join(dataDir, "indexes", kb.kbId))).toBe(true);
  const del = await server.request("DELETE", `/v1/knowledge-bases/${kb.kbId}`, { token: kb.account.apiKey });
  expect(del.status).toBe(200);
  for (let waited = 0; waited < 10_000 && existsSync(join(dataDir, "indexes", kb.kbId)); waited += 100) await Bun.sleep(100);
  expect(existsSync(join(dataDir, "indexes", kb.kbId))).toBe(false);
  await server.server.ctx.deletions.settled();
  const db = server.server.ctx.db;
  expect(db.query("SELECT COUNT(*) AS n FROM search_log WHERE kb_id = ?").get(kb.kbId)).toEqual({ n: 0 });
  expect(db.query("SELECT COUNT(*) AS n FROM search_segments WHERE kb_id = ?").get(kb.kbId)).toEqual({ n: 0 });
});

test("a knowledge base deleted before its first segment has its search log removed too, without a restart", async () => {
  const small = await createKb(server);
  await addDocs(server, small, [{ name: "only", text: "A pond too small for a segment of its own." }]);
  const db = server.server.ctx.db;
  const logged = () => db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM search_log WHERE kb_id = ?").get(small.kbId)!.n;
  expect(logged()).toBeGreaterThan(0);
  expect(existsSync(join(dataDir, "indexes", small.kbId))).toBe(false);
  expect((await server.request("DELETE", `/v1/knowledge-bases/${small.kbId}`, { token: small.account.apiKey })).status).toBe(200);
  await server.server.ctx.deletions.settled();
  for (let waited = 0; waited < 10_000 && logged() > 0; waited += 100) await Bun.sleep(100);
  expect(logged()).toBe(0);
});
