// Messages between the worker pool (pool.ts) and a worker thread (worker.ts).

export type ToWorker =
  | { type: "init"; settings: unknown }
  | { type: "job"; id: string; payload: unknown }
  | { type: "stop" };

export type FromWorker<Result> =
  | { type: "ready" }
  | { type: "init-failed"; error: string }
  | { type: "done"; result: Result }
  /** The job was abandoned because the worker is stopping; it must run again later. */
  | { type: "interrupted" };
