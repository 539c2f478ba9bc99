// A stand-in ingestion worker for the pool tests: speaks the pool's protocol and does what each job's
// payload says (finish, crash, hang, or work slowly until asked to stop).
import type { FromWorker, ToWorker } from "../../src/ingest/worker-protocol.ts";

declare const self: Worker;

let busy = false;
let stopRequested = false;
const post = (message: FromWorker<string>) => self.postMessage(message);

async function run(id: string, action: string): Promise<void> {
  busy = true;
  if (action === "crash") throw new Error(`job ${id} crashed the worker`);
  if (action === "hang") return;
  if (action === "slow") {
    while (!stopRequested) await Bun.sleep(10);
    post({ type: "interrupted" });
    process.exit(0);
  }
  busy = false;
  post({ type: "done", result: `done:${id}` });
  if (stopRequested) process.exit(0);
}

self.addEventListener("message", (event: MessageEvent<ToWorker>) => {
  const message = event.data;
  if (message.type === "init") {
    if ((message.settings as { failInit?: boolean }).failInit) {
      post({ type: "init-failed", error: "no model" });
      process.exit(1);
    }
    post({ type: "ready" });
  } else if (message.type === "job") {
    void run(message.id, (message.payload as { action: string }).action);
  } else {
    stopRequested = true;
    if (!busy) process.exit(0);
  }
});
