// The checkpoint thread (checkpointer.ts): its own connection copies the write-ahead log into the database
// once COPY_FROM_FRAMES frames wait to be copied, without waiting for readers or writers (PASSIVE: what a
// reader still needs waits for the next round). The first commit after a copy of the whole log starts the
// log over (and syncs its header), so copying more often would cost the HTTP thread more of those syncs.
import { Database } from "bun:sqlite";
import { fstatSync, openSync, readSync, statSync } from "node:fs";
import type { ToCheckpointThread } from "./checkpointer.ts";

declare const self: Worker;

const CHECK_EVERY_MS = 250;
/** Half of SQLite's automatic checkpoint (1,000 frames), which the HTTP thread's commits still run. */
const COPY_FROM_FRAMES = 500;
/** The wal-index header's mxFrame (the log's last frame) and its checkpoint info's nBackfill (frames copied), as 32-bit words. */
const MX_FRAME_WORD = 16 / 4;
const N_BACKFILL_WORD = 96 / 4;

let db: Database | null = null;
let shmPath = "";
/**
 * The -shm file, opened once and never closed (the process's exit closes it). Closing any descriptor of a
 * file drops every POSIX lock the process holds on it (fcntl(2)), and this process's SQLite connections
 * hold theirs on the -shm: the read marks of open read transactions, the log's write lock. Opened and closed
 * every round, it let another process (`quarry accounts`, say) copy into the database pages that a reader
 * here still needed from the log, which that reader then found "malformed" (test/store/checkpointer.test.ts),
 * and could let it write while a writer here held the log.
 */
let shm: { fd: number; inode: number } | null = null;
let timer: Timer | undefined;
const header = new Uint32Array(N_BACKFILL_WORD + 1);

/**
 * Frames in the log not yet copied into the database, read from the wal-index in the -shm file
 * (https://www.sqlite.org/walformat.html, native byte order); null when it cannot be read.
 */
function framesPending(): number | null {
  try {
    // A database made anew at the same path (its old files deleted) has a new -shm: opened too, the old one left open.
    const inode = statSync(shmPath).ino;
    if (shm?.inode !== inode) {
      const fd = openSync(shmPath, "r");
      shm = { fd, inode: fstatSync(fd).ino };
    }
    if (readSync(shm.fd, header, 0, header.byteLength, 0) < header.byteLength) return null;
    return header[MX_FRAME_WORD] - header[N_BACKFILL_WORD];
  } catch {
    return null;
  }
}

function check(): void {
  // Unread, the log is left to the commits' own checkpoints.
  const pending = framesPending();
  if (pending === null || pending < COPY_FROM_FRAMES) return;
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
      // The HTTP thread's commits then checkpoint on their own, as SQLite does by default.
      console.error(`quarry: the checkpoint thread cannot open ${message.databasePath}: ${(error as Error).message}`);
    }
  } else {
    clearInterval(timer);
    db?.close();
    db = null;
    self.postMessage({ type: "stopped" });
  }
};
