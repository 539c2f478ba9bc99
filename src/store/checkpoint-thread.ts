// The checkpoint thread (checkpointer.ts): its own connection copies the write-ahead log into the database
// once CHECKPOINT_AT_FRAMES frames wait to be copied, as SQLite's automatic checkpoint would, without
// waiting for readers or writers (PASSIVE: what a reader still needs waits for the next round). Not more
// often: the first commit after a checkpoint that copied the whole log starts it over, and syncs its header
// (a ~1-5 ms fsync on the HTTP thread's commit).
import { Database } from "bun:sqlite";
import { closeSync, openSync, readSync } from "node:fs";
import type { ToCheckpointThread } from "./checkpointer.ts";

declare const self: Worker;

const CHECK_EVERY_MS = 250;
/** SQLite's default automatic checkpoint. */
const CHECKPOINT_AT_FRAMES = 1_000;
/** The wal-index header's mxFrame (the log's last frame) and its checkpoint info's nBackfill (frames copied), as 32-bit words. */
const MX_FRAME_WORD = 16 / 4;
const N_BACKFILL_WORD = 96 / 4;

let db: Database | null = null;
let shmPath = "";
let timer: Timer | undefined;
const header = new Uint32Array(N_BACKFILL_WORD + 1);

/**
 * Frames in the log not yet copied into the database, read from the wal-index in the -shm file
 * (https://www.sqlite.org/walformat.html, native byte order); null when it cannot be read.
 */
function framesPending(): number | null {
  try {
    const fd = openSync(shmPath, "r");
    try {
      if (readSync(fd, header, 0, header.byteLength, 0) < header.byteLength) return null;
    } finally {
      closeSync(fd);
    }
    return header[MX_FRAME_WORD] - header[N_BACKFILL_WORD];
  } catch {
    return null;
  }
}

function check(): void {
  const pending = framesPending();
  if (pending !== null && pending < CHECKPOINT_AT_FRAMES) return;
  try {
    db?.exec("PRAGMA wal_checkpoint(PASSIVE)");
  } catch {
    // SQLITE_BUSY: another connection is checkpointing right now; the next round goes on from there.
  }
}

self.onmessage = (event: MessageEvent<ToCheckpointThread>) => {
  const message = event.data;
  if (message.type === "start") {
    try {
      db = new Database(message.databasePath);
      shmPath = `${message.databasePath}-shm`;
      timer = setInterval(check, CHECK_EVERY_MS);
    } catch (error) {
      // The HTTP thread's connection then checkpoints past its fallback (db.ts).
      console.error(`quarry: the checkpoint thread cannot open ${message.databasePath}: ${(error as Error).message}`);
    }
  } else {
    clearInterval(timer);
    db?.close();
    db = null;
    self.postMessage({ type: "stopped" });
  }
};
