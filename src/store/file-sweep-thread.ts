// The file sweep's thread (file-sweep.ts), at background priority, so that walking a large file store
// never holds up requests. It reads the stored paths on a connection of its own and closes it before the
// walk, so that ending the thread mid-walk (a stop) leaves no connection open. Started by
// background-file-sweep.ts.
import { openDatabase } from "./db.ts";
import { prepareRuntime } from "../runtime/index.ts";
import { runInBackground } from "../background-priority.ts";
import { join } from "node:path";
import { makePrivate, storedFiles, sweepFileStore, type SweepResult } from "./file-sweep.ts";

declare const self: Worker;

export interface SweepRequest {
  dataDir: string;
  databasePath: string;
  startedAtMs: number;
}

export type SweepReply = { type: "read" } | { type: "swept"; result: SweepResult } | { type: "failed"; message: string };

function post(reply: SweepReply): void {
  self.postMessage(reply);
}

self.onmessage = async (event: MessageEvent<SweepRequest>) => {
  runInBackground();
  const { dataDir, databasePath, startedAtMs } = event.data;
  try {
    await prepareRuntime(dataDir);
    const db = openDatabase(databasePath, { migrate: false });
    let referenced: Set<string>;
    try {
      referenced = storedFiles(db);
    } finally {
      db.close();
      post({ type: "read" });
    }
    const result = sweepFileStore(referenced, dataDir, startedAtMs);
    makePrivate(join(dataDir, "indexes"));
    post({ type: "swept", result });
  } catch (error) {
    post({ type: "failed", message: (error as Error).message });
  }
};
