// A fixed-size pool of Bun workers fed from a job source. A worker that crashes, exits or overruns the
// time limit is replaced and its job handed back to the source, so one bad file never stops the pool.
//
// Protocol (see worker-protocol.ts): the pool sends "init" with the settings, the worker answers
// "ready"; then "job" → "done" as often as needed; "stop" asks the worker to finish or abandon its job
// at the next checkpoint and exit. A busy worker may "delegate" a task; the pool gives it to an idle
// worker (queued jobs come first) and relays the result, or answers null at once when none is free.
// A job whose document is withdrawn while it runs gets "cancel"; the worker drops it and answers "done".
// Each worker runs a parser process (parse-process.ts), killed along with the worker when that is terminated.
import type { FromWorker, ToWorker } from "./worker-protocol.ts";
import { SHARE_ENV } from "node:worker_threads";

/** What a job source's claim returns when it cannot tell now: the pool asks again after CLAIM_RETRY_MS. */
export const BUSY = Symbol("busy");
const CLAIM_RETRY_MS = 3;

export interface JobSource<Result> {
  /** The next job to run, null when there is none, or BUSY to be asked again shortly. */
  claim(): { id: string; payload: unknown } | null | typeof BUSY;
  finished(id: string, result: Result): void;
  /** The worker died (retry: true) or hung (retry: false) with this job; the reason is for the user. */
  crashed(id: string, reason: string, retry: boolean): void;
  /** The pool stopped before the job finished; it should run again after a restart. */
  abandoned(id: string): void;
  /** Of these running jobs, those no longer wanted (their document was deleted); checked at every dispatch. */
  withdrawn?(ids: string[]): string[];
  /**
   * Whether a job is waiting, without claiming it. A source that can tell gets its workers started only
   * once there is work: loading a worker's models takes a core for ~0.5 s, which would otherwise compete
   * with the first searches after a restart.
   */
  hasWork?(): boolean;
}

export interface PoolOptions<Result> {
  size: number;
  workerUrl: string;
  /** Sent to every worker in its "init" message. */
  settings: unknown;
  source: JobSource<Result>;
  /** A job running longer than this is treated as a crash and its worker replaced. */
  jobTimeoutMs: number;
  /** How often idle workers look for work that was queued without a wake() (e.g. re-queued jobs). */
  pollMs?: number;
  log?: (message: string) => void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  job: string | null;
  /** The delegated task this worker is doing, and for whom. */
  task: { from: Slot; requestId: number } | null;
  /** Being terminated: gets nothing more while its close event is on the way. */
  retired: boolean;
  /** The worker's parser process, if it started one. */
  parserPid: number | null;
  timer?: Timer;
  exited: Promise<void>;
}

const STOP_GRACE_MS = 10_000;
const MAX_RESTART_DELAY_MS = 60_000;

export class WorkerPool<Result> {
  private readonly slots = new Set<Slot>();
  private stopping = false;
  private poller?: Timer;
  /** The next dispatch after the source answered BUSY. */
  private retry?: Timer;
  private claimFailing = false;
  /** Consecutive workers that died before becoming ready; drives the restart back-off. */
  private failedStarts = 0;
  /** Whether the workers were started (at once, or when the first job was waiting: JobSource.hasWork). */
  private spawned = false;
  private readonly log: (message: string) => void;

  constructor(private readonly options: PoolOptions<Result>) {
    this.log = options.log ?? ((message) => console.error(message));
  }

  start(): void {
    if (!this.options.source.hasWork) this.spawnAll();
    this.poller = setInterval(() => this.dispatch(), this.options.pollMs ?? 1000);
    this.dispatch();
  }

  /** Hands queued jobs to idle workers now. */
  wake(): void {
    this.dispatch();
  }

  /** Workers that have loaded and can take jobs. */
  get readyWorkers(): number {
    return [...this.slots].filter((s) => s.ready).length;
  }

  get busyWorkers(): number {
    return [...this.slots].filter((s) => s.job !== null).length;
  }

  /** Asks every worker to stop, waits a little, then terminates the rest; unfinished jobs are abandoned. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearInterval(this.poller);
    clearTimeout(this.retry);
    const slots = [...this.slots];
    for (const slot of slots) this.send(slot, { type: "stop" });
    const grace = Bun.sleep(STOP_GRACE_MS);
    await Promise.race([Promise.all(slots.map((s) => s.exited)), grace]);
    for (const slot of this.slots) {
      this.release(slot, (id) => this.options.source.abandoned(id));
      this.terminate(slot);
    }
    this.slots.clear();
  }

  private spawnAll(): void {
    this.spawned = true;
    for (let i = 0; i < this.options.size; i++) this.spawn();
  }

  private spawn(): void {
    // Bun's default is the environment the process started with; the compiled binary's native addon
    // loaders need what src/runtime set since (QUARRY_RUNTIME_DIR).
    const worker = new Worker(this.options.workerUrl, { env: SHARE_ENV });
    let markExited!: () => void;
    const slot: Slot = {
      worker,
      ready: false,
      job: null,
      task: null,
      retired: false,
      parserPid: null,
      exited: new Promise((resolve) => (markExited = resolve)),
    };
    this.slots.add(slot);
    worker.addEventListener("message", (event: MessageEvent<FromWorker<Result>>) => this.onMessage(slot, event.data));
    worker.addEventListener("error", (event) => {
      this.log(`Ingestion worker error: ${event.message}`);
    });
    worker.addEventListener("close", (event) => {
      markExited();
      this.onExit(slot, (event as CloseEvent).code);
    });
    this.send(slot, { type: "init", settings: this.options.settings });
  }

  private onMessage(slot: Slot, message: FromWorker<Result>): void {
    switch (message.type) {
      case "ready":
        slot.ready = true;
        this.failedStarts = 0;
        this.dispatch();
        return;
      case "done":
        this.release(slot, (id) => this.options.source.finished(id, message.result));
        this.dispatch();
        return;
      case "interrupted":
        this.release(slot, (id) => this.options.source.abandoned(id));
        return;
      case "crashed":
        this.release(slot, (id) => this.options.source.crashed(id, message.reason, true));
        this.dispatch();
        return;
      case "init-failed":
        this.log(`Ingestion worker could not start: ${message.error}`);
        return;
      case "delegate":
        this.delegate(slot, message.requestId, message.task);
        return;
      case "task-done":
        this.finishTask(slot, message.result);
        this.dispatch();
        return;
      case "parser-started":
        slot.parserPid = message.pid;
        return;
    }
  }

  private delegate(from: Slot, requestId: number, task: unknown): void {
    this.dispatch();
    const helper = this.stopping ? undefined : [...this.slots].find((s) => s !== from && this.isIdle(s));
    if (!helper) {
      this.send(from, { type: "delegated", requestId, result: null });
      return;
    }
    helper.task = { from, requestId };
    this.send(helper, { type: "task", task });
  }

  /** Relays a task's result (null: failed or lost) to the worker that delegated it, if it is still there. */
  private finishTask(helper: Slot, result: unknown): void {
    const task = helper.task;
    helper.task = null;
    if (task && this.slots.has(task.from)) this.send(task.from, { type: "delegated", requestId: task.requestId, result });
  }

  private isIdle(slot: Slot): boolean {
    return slot.ready && !slot.retired && slot.job === null && slot.task === null;
  }

  private onExit(slot: Slot, code: number): void {
    killParser(slot);
    if (!this.slots.delete(slot)) return;
    this.finishTask(slot, null);
    if (this.stopping) return;
    const reason = `The ingestion worker stopped unexpectedly (exit code ${code})`;
    this.release(slot, (id) => this.options.source.crashed(id, reason, true));
    if (!slot.ready) this.failedStarts++;
    const delay = Math.min(MAX_RESTART_DELAY_MS, this.failedStarts === 0 ? 0 : 1000 * 2 ** (this.failedStarts - 1));
    if (delay > 0) this.log(`Restarting the ingestion worker in ${delay / 1000} s`);
    setTimeout(() => {
      if (!this.stopping) this.spawn();
    }, delay);
  }

  /** Frees the slot's job (if any) and tells the source what became of it. */
  private release(slot: Slot, outcome: (id: string) => void): void {
    clearTimeout(slot.timer);
    const id = slot.job;
    slot.job = null;
    if (id !== null) outcome(id);
  }

  private dispatch(): void {
    if (this.stopping) return;
    if (!this.spawned) {
      // The workers take the job once they report ready.
      if (this.options.source.hasWork!()) this.spawnAll();
      return;
    }
    this.cancelWithdrawn();
    for (const slot of this.slots) {
      if (!this.isIdle(slot)) continue;
      const job = this.claim();
      if (job === BUSY) {
        this.retry ??= setTimeout(() => {
          this.retry = undefined;
          this.dispatch();
        }, CLAIM_RETRY_MS);
        return;
      }
      if (!job) return;
      slot.job = job.id;
      slot.timer = setTimeout(() => this.timedOut(slot, job.id), this.options.jobTimeoutMs);
      this.send(slot, { type: "job", id: job.id, payload: job.payload });
    }
  }

  /**
   * The source's next job. A claim that fails (a full disk: SQLITE_FULL) leaves the job queued for the next
   * poll and is logged once until a claim succeeds again; thrown from dispatch, it would end the server.
   */
  private claim(): ReturnType<JobSource<Result>["claim"]> {
    try {
      const job = this.options.source.claim();
      this.claimFailing = false;
      return job;
    } catch (error) {
      if (!this.claimFailing) this.log(`Ingestion could not take the next document (${(error as Error).message}); it stays queued and is tried again`);
      this.claimFailing = true;
      return null;
    }
  }

  private timedOut(slot: Slot, id: string): void {
    if (slot.job !== id) return;
    const minutes = Math.round(this.options.jobTimeoutMs / 60_000);
    this.release(slot, (jobId) => this.options.source.crashed(jobId, `Processing took longer than ${minutes} minutes`, false));
    this.log(`Ingestion job ${id} timed out; replacing its worker`);
    // The close event spawns the replacement (the slot has no job any more, so nothing is reported twice).
    slot.retired = true;
    this.terminate(slot);
  }

  private cancelWithdrawn(): void {
    const running = [...this.slots].filter((s) => s.job !== null);
    if (running.length === 0 || !this.options.source.withdrawn) return;
    const withdrawn = new Set(this.options.source.withdrawn(running.map((s) => s.job!)));
    for (const slot of running) if (withdrawn.has(slot.job!)) this.send(slot, { type: "cancel", id: slot.job! });
  }

  /** A terminated worker cannot stop its parser process, so it is killed here. */
  private terminate(slot: Slot): void {
    slot.worker.terminate();
    killParser(slot);
  }

  private send(slot: Slot, message: ToWorker): void {
    slot.worker.postMessage(message);
  }
}

function killParser(slot: Slot): void {
  if (slot.parserPid === null) return;
  try {
    process.kill(slot.parserPid, "SIGKILL");
  } catch {
    // already gone
  }
  slot.parserPid = null;
}
