// tryWriteTx (store/db.ts): background work on the HTTP thread (claiming ingestion jobs) takes the write
// lock only when it is free, instead of sleeping in SQLite's busy wait while a worker holds it. Real SQLite
// file, two connections.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LOCKED, openDatabase, tryWriteTx } from "../../src/store/db.ts";

const dataDir = mkdtempSync(join(tmpdir(), "quarry-write-lock-"));
const path = join(dataDir, "quarry.db");
const http = openDatabase(path);
const worker = openDatabase(path, { migrate: false });
afterAll(() => {
  http.close();
  worker.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const busyTimeout = () => http.query<{ timeout: number }, []>("PRAGMA busy_timeout").get()!.timeout;
const logged = () => http.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM search_doc_log").get()!.n;
const write = (id: string) => () => http.query("INSERT INTO search_doc_log (kb_id, document_id) VALUES ('kb_a', ?)").run(id).changes;

test("LOCKED at once while another connection holds the write lock; the write once it is free; the busy timeout kept", () => {
  const timeout = busyTimeout();
  expect(timeout).toBeGreaterThan(0);
  worker.exec("BEGIN IMMEDIATE");
  // Waiting would end, after the whole timeout, in an SQLITE_BUSY error, not in LOCKED.
  expect(tryWriteTx(http, write("doc_1"))).toBe(LOCKED);
  expect(busyTimeout()).toBe(timeout);
  worker.exec("COMMIT");

  expect(tryWriteTx(http, write("doc_2"))).toBe(1);
  expect(logged()).toBe(1);
  expect(busyTimeout()).toBe(timeout);
  // A failure inside rolls back and is thrown as it is.
  expect(() =>
    tryWriteTx(http, () => {
      write("doc_3")();
      throw new Error("inside");
    }),
  ).toThrow("inside");
  expect(logged()).toBe(1);
  expect(busyTimeout()).toBe(timeout);
});
