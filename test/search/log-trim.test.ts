// Recording a new segment forgets the change-log rows it holds (search/index-recovery.ts), TRIM_BATCH at a
// time on the index worker's connection, leaving the write lock free between batches so that the HTTP
// thread's writes (a search's usage count, the request history) get in. Real SQLite file, real schema, a
// second connection standing in for the HTTP thread; it never waits for the lock (busy timeout 0). A start
// finishes a recording that a stop or crash cut short, and tells one from a finished one (recordUnfinished).
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/store/db.ts";
import { recordSegment, recordUnfinished, TRIM_BATCH } from "../../src/search/index-recovery.ts";

const dataDir = mkdtempSync(join(tmpdir(), "quarry-log-trim-"));
const path = join(dataDir, "quarry.db");
const worker = openDatabase(path);
const http = openDatabase(path, { migrate: false });
http.exec("PRAGMA busy_timeout = 0");
afterAll(() => {
  worker.close();
  http.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const logged = (kbId: string) => worker.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM search_log WHERE kb_id = ?").get(kbId)!.n;

test("a segment's log rows go a batch at a time, with the write lock free for other connections between batches", () => {
  const rows = 2 * TRIM_BATCH + 123;
  const log = worker.query("INSERT INTO search_log (kb_id, chunk_rowid, added) VALUES (?, ?, 1)");
  worker.transaction(() => {
    for (let i = 1; i <= rows + 50; i++) {
      log.run("kb_a", i);
      if (i <= 10) log.run("kb_b", i);
    }
  })();
  const watermark = worker.query<{ seq: number }, []>(`SELECT seq FROM search_log WHERE kb_id = 'kb_a' ORDER BY seq LIMIT 1 OFFSET ${rows - 1}`).get()!.seq;

  let pauses = 0;
  recordSegment(worker, "kb_a", watermark, () => {
    pauses++;
    // The HTTP thread's write, without waiting: it fails with SQLITE_BUSY if the lock is still held.
    http.transaction(() => http.query("INSERT INTO search_doc_log (kb_id, document_id) VALUES ('kb_c', ?)").run(`doc_${pauses}`)).immediate();
    // What is left is past this batch.
    expect(logged("kb_a")).toBe(rows + 50 - pauses * TRIM_BATCH);
  });
  expect(pauses).toBe(2);
  // Rows after the watermark, and another knowledge base's, stay.
  expect(logged("kb_a")).toBe(50);
  expect(logged("kb_b")).toBe(10);
  expect(http.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM search_doc_log WHERE kb_id = 'kb_c'").get()!.n).toBe(2);
});

test("a segment counts as recorded once its watermark is on record and none of its log rows is left", () => {
  const log = worker.query("INSERT INTO search_log (kb_id, chunk_rowid, added) VALUES ('kb_r', ?, 1)");
  for (let i = 1; i <= 3; i++) log.run(i);
  const watermark = worker.query<{ seq: number }, []>("SELECT MAX(seq) AS seq FROM search_log WHERE kb_id = 'kb_r'").get()!.seq;
  // Published, not recorded (a crash in between).
  expect(recordUnfinished(worker, "kb_r", watermark)).toBe(true);
  // Recorded, its rows not yet forgotten (a stop during the trim).
  worker.query("INSERT INTO search_segments (kb_id, watermark) VALUES ('kb_r', ?)").run(watermark);
  expect(recordUnfinished(worker, "kb_r", watermark)).toBe(true);
  recordSegment(worker, "kb_r", watermark);
  expect(recordUnfinished(worker, "kb_r", watermark)).toBe(false);
  // A change after the segment is the next segment's business.
  log.run(4);
  expect(recordUnfinished(worker, "kb_r", watermark)).toBe(false);
});
