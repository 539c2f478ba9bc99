// The checkpoint thread (store/checkpointer.ts) copies the write-ahead log into the database once 500
// pages wait, before a commit's own checkpoint (at 1,000) is due. Real SQLite files; the server's own
// connection and thread in the last test.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Checkpointer } from "../../src/store/checkpointer.ts";
import { openDatabase, type Db } from "../../src/store/db.ts";
import { startTestServer } from "../helpers/server.ts";
import { until } from "../helpers/until.ts";

const dataDir = mkdtempSync(join(tmpdir(), "quarry-checkpoint-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const PAGE = 4096;

/** About `pages` new pages (one row each), in commits of 100. */
function writePages(db: Db, pages: number): void {
  db.exec("CREATE TABLE IF NOT EXISTS filler (id INTEGER PRIMARY KEY, bytes BLOB)");
  const insert = db.query("INSERT INTO filler (bytes) VALUES (?)");
  for (let written = 0; written < pages; written += 100) {
    db.transaction(() => {
      for (let row = 0; row < 100; row++) insert.run(new Uint8Array(PAGE - 200).fill(row));
    })();
  }
}

const size = (path: string) => statSync(path).size;

/** A connection whose commits never checkpoint, so that only the thread copies the log. */
function openWithoutCheckpoints(name: string): { db: Db; path: string } {
  const path = join(dataDir, name);
  const db = openDatabase(path);
  db.exec("PRAGMA wal_autocheckpoint = 0");
  return { db, path };
}

async function withCheckpointer(path: string, run: () => Promise<void>): Promise<void> {
  const checkpointer = new Checkpointer(path);
  checkpointer.start();
  try {
    await run();
  } finally {
    await checkpointer.stop();
  }
}

test("the checkpoint thread copies a log of 500 pages or more into the database", async () => {
  const { db, path } = openWithoutCheckpoints("long-log.db");
  const before = size(path);
  writePages(db, 3_000);
  expect(size(path)).toBe(before);
  await withCheckpointer(path, () => until(() => size(path) >= before + 3_000 * PAGE, "the log to be copied into the database", 5_000));
  db.close();
});

test("it leaves a log of fewer than 500 pages alone: each copy makes the next commit start the log over", async () => {
  const { db, path } = openWithoutCheckpoints("short-log.db");
  const before = size(path);
  writePages(db, 300);
  await withCheckpointer(path, async () => {
    // Four of its rounds.
    await Bun.sleep(1_100);
    expect(size(path)).toBe(before);
  });
  db.close();
});

test("the server's thread copies the HTTP connection's log before the connection's own checkpoint is due", async () => {
  const server = await startTestServer();
  try {
    const { db } = server.server.ctx;
    const path = join(server.dataDir, "quarry.db");
    const before = size(path);
    // Past 500 pages, short of 1,000: only the thread copies them.
    writePages(db, 700);
    await until(() => size(path) >= before + 500 * PAGE, "the server's checkpoint thread to copy the log", 5_000);
  } finally {
    await server.stop();
  }
});

test("a read transaction in this process keeps its snapshot while another process writes and checkpoints", async () => {
  const { db, path } = openWithoutCheckpoints("snapshot.db");
  writePages(db, 200);
  db.exec("CREATE TABLE other (id INTEGER PRIMARY KEY, bytes BLOB)");
  const insert = db.query("INSERT INTO other (bytes) VALUES (?)");
  db.transaction(() => {
    for (let row = 0; row < 100; row++) insert.run(new Uint8Array(PAGE - 200).fill(row));
  })();
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const reader = openDatabase(path);
  await withCheckpointer(path, async () => {
    reader.exec("BEGIN");
    // The snapshot starts here; `other`'s pages are not read yet.
    expect(reader.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM filler").get()!.n).toBe(200);
    // Rounds of the thread while the read transaction is open.
    await Bun.sleep(600);
    const writer = Bun.spawnSync([
      process.execPath,
      "-e",
      `const { Database } = require("bun:sqlite");
       const db = new Database(${JSON.stringify(path)});
       db.exec("PRAGMA busy_timeout = 5000");
       const insert = db.query("INSERT INTO other (bytes) VALUES (?)");
       db.transaction(() => { for (let row = 0; row < 300; row++) insert.run(new Uint8Array(${PAGE - 200})); })();
       db.exec("PRAGMA wal_checkpoint(PASSIVE)");
       db.close();`,
    ]);
    expect(writer.exitCode).toBe(0);
    // What another process committed since is not seen, however far it copied its log into the database.
    expect(reader.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM other").get()!.n).toBe(100);
    reader.exec("COMMIT");
    expect(reader.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM other").get()!.n).toBe(400);
  });
  reader.close();
  db.close();
});
