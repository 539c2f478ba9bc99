// The index memory budget (search/index-cache.ts): with a budget smaller than two knowledge bases' indexes,
// searching one lets the other go, and searching that one again loads it back with the same results.
// Documents that become ready are taken into their index before its next search, without pushing another
// index out.
// Real SQLite file and schema; chunks written straight into it (no model needed for keyword search). Segments
// the index worker removes while they are being taken in are passed over, never thrown.
import { afterAll, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type Db } from "../../src/store/db.ts";
import { ensureVectorTable } from "../../src/store/vectors.ts";
import { IndexCache } from "../../src/search/index-cache.ts";
import { DeltaVectors } from "../../src/search/delta-vectors.ts";
import { buildSegment } from "../../src/search/segment-builder.ts";
import { until } from "../helpers/until.ts";

const dataDir = mkdtempSync(join(tmpdir(), "quarry-index-cache-"));
const db = openDatabase(join(dataDir, "quarry.db"));
ensureVectorTable(db, { id: "test", dimension: 4 });
const WORDS = ["river", "mountain", "forest", "desert", "ocean", "valley", "glacier", "canyon"];

function knowledgeBase(db: Db, kbId: string, chunks: number): void {
  const now = new Date().toISOString();
  db.query(
    "INSERT OR IGNORE INTO accounts (id, email, email_normalized, password_hash, trial_ends_at, period_anchor, created_at, updated_at) VALUES ('acc_1', 'a@b.c', 'a@b.c', 'x', ?, ?, ?, ?)",
  ).run(now, now, now, now);
  db.query("INSERT INTO knowledge_bases (id, account_id, name, created_at, updated_at) VALUES (?, 'acc_1', ?, ?, ?)").run(kbId, kbId, now, now);
  readyDocument(db, kbId, `doc_${kbId}`, chunks);
}

/** A ready document of `chunks` chunks in the knowledge base, as ingestion leaves it. */
function readyDocument(db: Db, kbId: string, docId: string, chunks: number, vector = (i: number) => new Float32Array([1, 0, 0, i])): void {
  const now = new Date().toISOString();
  db.query(
    "INSERT INTO documents (id, kb_id, account_id, name, file_type, file_size_bytes, chunk_count, status, metadata, created_at, updated_at) VALUES (?, ?, 'acc_1', 'd.txt', 'txt', 1, ?, 'ready', '{}', ?, ?)",
  ).run(docId, kbId, chunks, now, now);
  let first = 0;
  let last = 0;
  for (let i = 0; i < chunks; i++) {
    const text = `${WORDS[i % WORDS.length]} ${WORDS[(i * 3) % WORDS.length]} chunk${i}`;
    const { rowid } = db
      .query<{ rowid: number }, (string | number)[]>(
        "INSERT INTO chunks (id, document_id, kb_id, chunk_index, text, end_page, token_count, created_at) VALUES (?, ?, ?, ?, ?, 1, 3, ?) RETURNING rowid",
      )
      .get(`chk_${docId}_${i}`, docId, kbId, i, text, now)!;
    db.query("INSERT INTO chunk_vectors (rowid, embedding) VALUES (?, ?)").run(rowid, vector(i));
    first ||= rowid;
    last = rowid;
  }
  db.query("UPDATE documents SET first_chunk_rowid = ?, last_chunk_rowid = ? WHERE id = ?").run(first, last, docId);
}

knowledgeBase(db, "kb_a", 600);
knowledgeBase(db, "kb_b", 600);

afterAll(() => {
  db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test("past the memory budget the least recently searched knowledge base is let go, and comes back intact", async () => {
  // One knowledge base of 600 chunks takes ~0.6 MB in memory (its changes since no segment, all in the delta).
  const cache = new IndexCache({ db, dataDir, databasePath: join(dataDir, "quarry.db"), dimension: 4, memoryBudgetBytes: 900_000, segmentMinChanges: 1_000_000 });
  try {
    const first = await cache.get("kb_a").keywordSearch("glacier canyon", await cache.get("kb_a").eligibility(null), 5);
    expect(first.length).toBe(5);
    expect(cache.loaded).toBe(1);
    await cache.get("kb_b").keywordSearch("glacier", await cache.get("kb_b").eligibility(null), 5);
    expect(cache.loaded).toBe(1);
    expect(await cache.get("kb_a").keywordSearch("glacier canyon", await cache.get("kb_a").eligibility(null), 5)).toEqual(first);
    expect(cache.loaded).toBe(1);
  } finally {
    await cache.stop();
  }
  const roomy = new IndexCache({ db, dataDir, databasePath: join(dataDir, "quarry.db"), dimension: 4, memoryBudgetBytes: 100_000_000, segmentMinChanges: 1_000_000 });
  try {
    roomy.get("kb_a");
    roomy.get("kb_b");
    expect(roomy.loaded).toBe(2);
  } finally {
    await roomy.stop();
  }
});

test("documents that become ready are taken into their index before its next search; an index not in memory only while the budget has room", async () => {
  const options = { db, dataDir, databasePath: join(dataDir, "quarry.db"), dimension: 4, segmentMinChanges: 1_000_000 };
  knowledgeBase(db, "kb_c", 10);
  const roomy = new IndexCache({ ...options, memoryBudgetBytes: 100_000_000 });
  try {
    const index = roomy.get("kb_c");
    expect(index.deltaSize).toBe(10);
    readyDocument(db, "kb_c", "doc_kb_c_2", 20);
    roomy.warm("kb_c");
    roomy.warm("kb_a");
    // Taken in a moment later, with whatever else became ready meanwhile.
    expect(index.deltaSize).toBe(10);
    expect(roomy.has("kb_a")).toBe(false);
    await until(() => index.deltaSize === 30 && roomy.has("kb_a"), "the warm-up");
  } finally {
    await roomy.stop();
  }
  // kb_a's index (~0.6 MB) alone fills this budget: it takes in its new document, and kb_c is not loaded.
  const full = new IndexCache({ ...options, memoryBudgetBytes: 500_000 });
  try {
    const searched = full.get("kb_a");
    readyDocument(db, "kb_a", "doc_kb_a_2", 5);
    full.warm("kb_a");
    full.warm("kb_c");
    await until(() => searched.deltaSize === 605, "kb_a's warm-up");
    expect(full.has("kb_a")).toBe(true);
    expect(full.has("kb_c")).toBe(false);
    expect(full.loaded).toBe(1);
  } finally {
    await full.stop();
  }
});

test("a chunk written while an index takes in the log, into a block of vectors it has read, is found by its own vector", async () => {
  knowledgeBase(db, "kb_r", 3);
  // Another connection writes as an ingestion worker would: right before the index reads its log a second
  // time in one slice, after it has read the block of vectors that this chunk goes into.
  const worker = openDatabase(join(dataDir, "quarry.db"));
  let logReads = -1;
  const watched = new Proxy(db, {
    get(target, key) {
      if (key !== "query") {
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      }
      return (sql: string) => {
        if (sql.includes("FROM search_log WHERE kb_id = ? AND seq > ?") && logReads >= 0 && ++logReads === 2) {
          readyDocument(worker, "kb_r", "doc_kb_r_late", 1, () => new Float32Array([0, 1, 0, 0]));
        }
        return target.query(sql);
      };
    },
  });
  const cache = new IndexCache({ db: watched, dataDir, databasePath: join(dataDir, "quarry.db"), dimension: 4, memoryBudgetBytes: 100_000_000, segmentMinChanges: 1_000_000 });
  try {
    cache.get("kb_r");
    readyDocument(db, "kb_r", "doc_kb_r_2", 1, () => new Float32Array([0, 0, 1, 0]));
    logReads = 0;
    const index = cache.get("kb_r");
    expect(logReads).toBeGreaterThanOrEqual(2);
    const late = db.query<{ rowid: number }, []>("SELECT rowid FROM chunks WHERE document_id = 'doc_kb_r_late'").get()!.rowid;
    const [best] = await index.vectorSearch(new Float32Array([0, 1, 0, 0]), await index.eligibility(null), 1);
    expect(best.rowid).toBe(late);
    expect(best.score).toBeGreaterThan(0.99);
  } finally {
    worker.close();
    await cache.stop();
  }
});

test("a segment the index worker removed before the index took it in is passed over; a knowledge base being deleted opens without its going segment", async () => {
  const cache = new IndexCache({ db, dataDir, databasePath: join(dataDir, "quarry.db"), dimension: 4, memoryBudgetBytes: 100_000_000, segmentMinChanges: 1_000_000 });
  try {
    const built = buildSegment(db, dataDir, "kb_a", 4);
    const index = cache.get("kb_a");
    expect(index.segmentWatermark).toBe(built.watermark);
    const search = async () => index.keywordSearch("glacier canyon", await index.eligibility(null), 5);
    const before = await search();
    expect(before.length).toBe(5);
    // A segment removed before its message arrived: nothing thrown (it came from the index worker's message,
    // where a throw ends the process), the index keeps its segment and answers as before.
    expect(() => index.adopt({ dir: join(dataDir, "indexes", "kb_a", String(built.watermark + 9)), watermark: built.watermark + 9 })).not.toThrow();
    expect(index.segmentWatermark).toBe(built.watermark);
    expect(await search()).toEqual(before);
    // Segments 1, 2 and 3 past it published: the index worker may be removing segment 1, whose files are all
    // still there here, but could have been listed in part. It is passed over; the newest is taken in.
    const published = (step: number) => {
      const dir = join(dataDir, "indexes", "kb_a", String(built.watermark + step));
      cpSync(built.dir, dir, { recursive: true });
      writeFileSync(join(dir, "manifest.json"), JSON.stringify({ ...JSON.parse(readFileSync(join(built.dir, "manifest.json"), "utf8")), watermark: built.watermark + step }));
      return { dir, watermark: built.watermark + step };
    };
    const [first, , newest] = [published(1), published(2), published(3)];
    index.adopt(first);
    expect(index.segmentWatermark).toBe(built.watermark);
    index.adopt(newest);
    expect(index.segmentWatermark).toBe(newest.watermark);
    expect(await search()).toEqual(before);

    // kb_b is being deleted and the index worker is removing its folder: its newest segment has lost its manifest,
    // or files the search threads would read (listed after their removal, they would be missing from the mapping).
    const gone = buildSegment(db, dataDir, "kb_b", 4);
    rmSync(join(gone.dir, "manifest.json"));
    expect(() => cache.get("kb_b")).toThrow(/ENOENT/);
    db.query("UPDATE knowledge_bases SET deleting = 1 WHERE id = 'kb_b'").run();
    expect(cache.get("kb_b").segmentWatermark).toBeNull();
    cache.forget("kb_b");
    rmSync(gone.dir, { recursive: true });
    const partly = buildSegment(db, dataDir, "kb_b", 4);
    rmSync(join(partly.dir, "vector", "vectors.json"));
    const deleting = cache.get("kb_b");
    expect(deleting.segmentWatermark).toBeNull();
    // Its chunks are still in the change log, so the delta answers (the HTTP layer answers 404 before a search).
    expect(await deleting.vectorSearch(new Float32Array([1, 0, 0, 0]), await deleting.eligibility(null), 5)).toHaveLength(5);
  } finally {
    db.query("UPDATE knowledge_bases SET deleting = 0 WHERE id = 'kb_b'").run();
    await cache.stop();
  }
});

test("the budget counts an index's vector arrays as allocated: one chunk at 512-d holds 256 slots (~149 KB), not one row", () => {
  const delta = new DeltaVectors(512);
  delta.add(1, new Float32Array(512).fill(0.1));
  expect(delta.estimatedBytes).toBeGreaterThanOrEqual(256 * 512);
});
