// Messages between the worker pool (pool.ts) and a worker thread (worker.ts).
//
// Besides whole jobs, a busy worker may hand a piece of its job (a task, e.g. one embedding batch) to an
// idle worker through the pool, so that one large document can use every core.

export type ToWorker =
  | { type: "init"; settings: unknown }
  | { type: "job"; id: string; payload: unknown }
  /** Do a task for another worker and answer "task-done". */
  | { type: "task"; task: unknown }
  /** The answer to this worker's "delegate": the task's result, or null when no worker was free (or it failed). */
  | { type: "delegated"; requestId: number; result: unknown }
  /** The job's document was deleted: abandon it now and answer "done" (ignored when the job is already over). */
  | { type: "cancel"; id: string }
  | { type: "stop" };

export type FromWorker<Result> =
  | { type: "ready" }
  | { type: "init-failed"; error: string }
  | { type: "done"; result: Result }
  /** The job was abandoned because the worker is stopping; it must run again later. */
  | { type: "interrupted" }
  /** The job's parser was killed from outside (parse-process.ts ParserKilled): run it again, as after a crash. */
  | { type: "crashed"; reason: string }
  | { type: "delegate"; requestId: number; task: unknown }
  /** null when the task failed. */
  | { type: "task-done"; result: unknown }
  /** The worker started a parser process (parse-process.ts), which whoever terminates the worker must kill too. */
  | { type: "parser-started"; pid: number };
