// Ending a worker thread that holds something to release (a database connection, a model): it is asked
// to, given a grace period to say it did, then terminated either way.

/** Posts `request`, waits up to `graceMs` for a message of type `done`, then terminates the worker. */
export async function stopWorker(worker: Worker, request: { type: string }, done: string, graceMs: number): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, graceMs);
    worker.addEventListener("message", (event: MessageEvent<{ type: string }>) => {
      if (event.data?.type !== done) return;
      clearTimeout(timer);
      resolve();
    });
    worker.postMessage(request);
  });
  worker.terminate();
}
