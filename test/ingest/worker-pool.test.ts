// The worker pool on its own, with a stand-in worker (pool-test-worker.ts) that can crash or hang on
// demand: a crashing or hung worker is replaced and its job reported, the pool keeps working, a busy
// worker can hand a task to an idle one, and a stop hands back the job that was running.
import { afterEach, describe, expect, test } from "bun:test";
import { BUSY, WorkerPool, type JobSource } from "../../src/ingest/pool.ts";
import { until } from "../helpers/until.ts";

const WORKER_URL = new URL("./pool-test-worker.ts", import.meta.url).href;

const pools: WorkerPool<string>[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.stop()));
});

function startPool(jobs: JobSource<string>, options: { size?: number; jobTimeoutMs?: number; settings?: object; pollMs?: number } = {}) {
  const pool = new WorkerPool<string>({
    size: options.size ?? 1,
    workerUrl: WORKER_URL,
    settings: options.settings ?? {},
    source: jobs,
    jobTimeoutMs: options.jobTimeoutMs ?? 60_000,
    pollMs: options.pollMs ?? 20,
    log: () => {},
  });
  pools.push(pool);
  pool.start();
  return pool;
}

/** A job source whose callbacks record into arrays. */
function recorder() {
  const queue: { id: string; payload: { action: string } }[] = [];
  const log = { finished: [] as string[], crashed: [] as { id: string; reason: string; retry: boolean }[], abandoned: [] as string[] };
  const jobs: JobSource<string> = {
    claim: () => queue.shift() ?? null,
    finished: (_id, result) => log.finished.push(result),
    crashed: (id, reason, retry) => log.crashed.push({ id, reason, retry }),
    abandoned: (id) => log.abandoned.push(id),
  };
  return { jobs, log, add: (id: string, action: string) => queue.push({ id, payload: { action } }) };
}

describe("worker pool", () => {
  test("runs queued jobs on every worker", async () => {
    const { jobs, log, add } = recorder();
    for (let i = 0; i < 6; i++) add(`j${i}`, "ok");
    startPool(jobs, { size: 2 });
    await until(() => log.finished.length === 6, "six jobs");
    expect(log.finished.sort()).toEqual(["done:j0", "done:j1", "done:j2", "done:j3", "done:j4", "done:j5"]);
  });

  test("a source that answers BUSY is asked again shortly, not at the next poll", async () => {
    const { jobs, log, add } = recorder();
    let busy = 3;
    const claim = jobs.claim;
    jobs.claim = () => (busy-- > 0 ? BUSY : claim());
    add("later", "ok");
    // Polls an hour apart: only the retries can reach the job within the wait.
    startPool(jobs, { pollMs: 3_600_000 });
    await until(() => log.finished.length === 1, "the job after three BUSY answers");
    expect(log.finished).toEqual(["done:later"]);
    expect(busy).toBeLessThan(0);
  });

  test("a busy worker's task goes to an idle worker, and comes back null when none is free", async () => {
    const { jobs, log, add } = recorder();
    const pool = startPool(jobs, { size: 2 });
    await until(() => pool.readyWorkers === 2, "both workers");
    add("shared", "delegate");
    pool.wake();
    await until(() => log.finished.length === 1, "the delegating job");
    expect(log.finished).toEqual(['done:shared delegated:"helped with shared"']);

    const single = recorder();
    single.add("alone", "delegate");
    startPool(single.jobs, { size: 1 });
    await until(() => single.log.finished.length === 1, "the job without a helper");
    expect(single.log.finished).toEqual(["done:alone delegated:null"]);
  });

  test("a crashing worker is replaced, its job reported for retry, and later jobs still run", async () => {
    const { jobs, log, add } = recorder();
    add("bad", "crash");
    add("good", "ok");
    const pool = startPool(jobs);
    await until(() => log.finished.length === 1, "the job after the crash");
    expect(log.crashed).toEqual([{ id: "bad", reason: expect.stringMatching(/stopped unexpectedly/), retry: true }]);
    expect(log.finished).toEqual(["done:good"]);
    add("later", "ok");
    pool.wake();
    await until(() => log.finished.length === 2, "a job on the replacement worker");
  });

  test("a job past the time limit is reported without retry and its worker replaced", async () => {
    const { jobs, log, add } = recorder();
    add("stuck", "hang");
    add("next", "ok");
    startPool(jobs, { jobTimeoutMs: 300 });
    await until(() => log.finished.length === 1, "the job after the hung one");
    expect(log.crashed).toEqual([{ id: "stuck", reason: expect.stringMatching(/took longer than/), retry: false }]);
  });

  test("stop hands back the running job as abandoned", async () => {
    const { jobs, log, add } = recorder();
    add("long", "slow");
    const pool = startPool(jobs);
    await until(() => pool.busyWorkers === 1, "the slow job to start");
    await pool.stop();
    expect(log.abandoned).toEqual(["long"]);
    expect(log.crashed).toEqual([]);
  });

  test("a worker that cannot start is retried with back-off and never takes jobs", async () => {
    const { jobs, log, add } = recorder();
    add("waiting", "ok");
    const pool = startPool(jobs, { settings: { failInit: true } });
    await Bun.sleep(300);
    expect(pool.busyWorkers).toBe(0);
    expect(log.finished).toEqual([]);
    expect(log.crashed).toEqual([]);
  });

  test("a source that says when work is waiting gets its workers only then", async () => {
    const { jobs, log, add } = recorder();
    let queued = 0;
    let asked = 0;
    const pool = startPool({ ...jobs, hasWork: () => (asked++, queued > 0) }, { size: 2 });
    await Bun.sleep(200);
    expect(asked).toBeGreaterThan(1);
    expect(pool.readyWorkers).toBe(0);
    add("late", "ok");
    queued = 1;
    await until(() => log.finished.length === 1, "the job queued after the start");
    expect(log.finished).toEqual(["done:late"]);
    // The first worker to load may finish the job before the second has loaded.
    await until(() => pool.readyWorkers === 2, "both workers");
  });
});
