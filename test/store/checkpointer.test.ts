// The write-ahead log is copied into the database by the checkpoint thread (store/checkpointer.ts), not by
// the commits of the HTTP thread's connection. Real SQLite files; the server's own connection and thread in
// the last test.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Checkpointer } from "../../src/store/checkpointer.ts";
import { FALLBACK_CHECKPOINT_PAGES, openDatabase, type Db } from "../../src/store/db.ts";
import { startTestServer } from "../helpers/server.ts";
import { until } from "../helpers/until.ts";

const dataDir = mkdtempSync(join(tmpdir(), "quarry-checkpoint-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const PAGE = 4096;
/** Past SQLite's automatic checkpoint (1,000 pages), in 30 commits. */
const PAGES_WRITTEN = 3_000;

function writePages(db: Db): void {
  db.exec("CREATE TABLE IF NOT EXISTS filler (id INTEGER PRIMARY KEY, bytes BLOB)");
  const insert = db.query("INSERT INTO filler (bytes) VALUES (?)");
  for (let commit = 0; commit < 30; commit++) {
    db.transaction(() => {
      for (let row = 0; row < PAGES_WRITTEN / 30; row++) insert.run(new Uint8Array(PAGE - 200).fill(row));
    })();
  }
}

const size = (path: string) => statSync(path).size;

test("a connection checkpointed elsewhere leaves the log to the checkpoint thread, which copies it into the database", async () => {
  const path = join(dataDir, "elsewhere.db");
  const db = openDatabase(path, { checkpointedElsewhere: true });
  expect(db.query<{ wal_autocheckpoint: number }, []>("PRAGMA wal_autocheckpoint").get()!.wal_autocheckpoint).toBe(FALLBACK_CHECKPOINT_PAGES);
  const before = size(path);
  writePages(db);
  // Every page is still only in the log: none of the 30 commits copied it over.
  expect(size(path)).toBe(before);
  expect(size(`${path}-wal`)).toBeGreaterThan(PAGES_WRITTEN * PAGE);

  const checkpointer = new Checkpointer(path);
  checkpointer.start();
  try {
    await until(() => size(path) >= before + PAGES_WRITTEN * PAGE, "the checkpoint thread to copy the log into the database", 5_000);
  } finally {
    await checkpointer.stop();
    db.close();
  }
});

test("the checkpoint thread leaves a log of fewer than 1,000 pages alone (each copy makes the next commit start the log over)", async () => {
  const path = join(dataDir, "short-log.db");
  const db = openDatabase(path, { checkpointedElsewhere: true });
  const before = size(path);
  db.exec("CREATE TABLE filler (id INTEGER PRIMARY KEY, bytes BLOB)");
  for (let row = 0; row < 100; row++) db.query("INSERT INTO filler (bytes) VALUES (?)").run(new Uint8Array(PAGE - 200));
  const checkpointer = new Checkpointer(path);
  checkpointer.start();
  try {
    // Four of its rounds.
    await Bun.sleep(1_200);
    expect(size(path)).toBe(before);
  } finally {
    await checkpointer.stop();
    db.close();
  }
});

test("a connection with SQLite's own checkpoints copies the log on the commit that takes it past 1,000 pages", () => {
  const path = join(dataDir, "own.db");
  const db = openDatabase(path);
  const before = size(path);
  writePages(db);
  db.close();
  expect(size(path)).toBeGreaterThan(before + (PAGES_WRITTEN / 2) * PAGE);
});

test("the server's HTTP connection leaves the log to the server's checkpoint thread", async () => {
  const server = await startTestServer();
  try {
    const { db } = server.server.ctx;
    expect(db.query<{ wal_autocheckpoint: number }, []>("PRAGMA wal_autocheckpoint").get()!.wal_autocheckpoint).toBe(FALLBACK_CHECKPOINT_PAGES);
    const path = join(server.dataDir, "quarry.db");
    const before = size(path);
    writePages(db);
    // Its round may come while the pages are written: the log then starts over, and what follows the copy
    // (fewer than 1,000 pages) waits for more.
    await until(() => size(path) >= before + (PAGES_WRITTEN - 1_000) * PAGE, "the server's checkpoint thread to copy the log into the database", 5_000);
  } finally {
    await server.stop();
  }
});
