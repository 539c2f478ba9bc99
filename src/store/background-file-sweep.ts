// Starts the file sweep (file-sweep.ts) on its own thread after the server listens, and reports what it
// did. A stop ends it wherever it is in the walk (the next start sweeps again), once its connection to
// the database is closed.
import type { SweepResult } from "./file-sweep.ts";
import type { SweepReply, SweepRequest } from "./file-sweep-thread.ts";

/**
 * Files modified this long before the start count as this server's own too: a crash right before a restart
 * leaves them for the next sweep, never an upload of this server's half written (coarse file timestamps).
 */
const OWN_WRITES_MARGIN_MS = 2_000;
/** How long a stop waits for the thread to close its connection before ending it anyway. */
const STOP_GRACE_MS = 2_000;

export interface BackgroundFileSweep {
  /** What the sweep did; null when it failed or was stopped first. */
  done: Promise<SweepResult | null>;
  stop(): Promise<void>;
}

export function sweepFilesInBackground(dataDir: string, databasePath: string, startedAtMs: number): BackgroundFileSweep {
  const worker = new Worker(new URL("./file-sweep-thread.ts", import.meta.url).href);
  (worker as Worker & { unref(): void }).unref();
  let settle!: (result: SweepResult | null) => void;
  const done = new Promise<SweepResult | null>((resolve) => (settle = resolve));
  let markRead!: () => void;
  const read = new Promise<void>((resolve) => (markRead = resolve));
  worker.onmessage = (event: MessageEvent<SweepReply>) => {
    const reply = event.data;
    if (reply.type === "read") return markRead();
    if (reply.type === "failed") console.error(`files: sweeping the stored files failed (${reply.message}); the next start tries again`);
    settle(reply.type === "swept" ? reply.result : null);
    markRead();
    worker.terminate();
  };
  worker.addEventListener("close", () => {
    settle(null);
    markRead();
  });
  worker.postMessage({ dataDir, databasePath, startedAtMs: startedAtMs - OWN_WRITES_MARGIN_MS } satisfies SweepRequest);
  return {
    done,
    async stop() {
      let timer: Timer | undefined;
      await Promise.race([read, new Promise((resolve) => (timer = setTimeout(resolve, STOP_GRACE_MS)))]);
      clearTimeout(timer);
      worker.terminate();
      settle(null);
    },
  };
}
