// Messages between the HTTP thread (segment-builds.ts) and the index worker (index-worker.ts).

export interface IndexWorkerSettings {
  dataDir: string;
  databasePath: string;
  dimension: number;
  /** A knowledge base gets a new segment once this many changes, or `growth` × its segment size, piled up. */
  minChanges: number;
  growth: number;
  /**
   * Or once at least minChanges piled up and none came for this long, however big its segment: a restart
   * (or a reopening under the memory budget) then replays fewer than minChanges changes from the log.
   */
  quietMs: number;
  /** How often the worker looks for piled-up changes on its own. */
  pollMs: number;
}

export type ToIndexWorker = { type: "init"; settings: IndexWorkerSettings } | { type: "check" } | { type: "stop" };

export type FromIndexWorker =
  | { type: "built"; kbId: string; dir: string; watermark: number; chunkCount: number; ms: number }
  | { type: "error"; kbId: string | null; message: string }
  | { type: "stopped" };
