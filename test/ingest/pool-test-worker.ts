// A stand-in ingestion worker for the pool tests: speaks the pool's protocol and does what each job's
// payload says (finish, crash, hang, work slowly until asked to stop, or delegate a task first).
import type { FromWorker, ToWorker } from "../../src/ingest/worker-protocol.ts";

declare const self: Worker;

let busy = false;
let stopRequested = false;
let answerDelegation: ((result: unknown) => void) | null = null;
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
  let result = `done:${id}`;
  if (action === "delegate") {
    post({ type: "delegate", requestId: 1, task: id });
    result += ` delegated:${JSON.stringify(await new Promise((resolve) => (answerDelegation = resolve)))}`;
  }
  busy = false;
  post({ type: "done", result });
  if (stopRequested) process.exit(0);
}

self.addEventListener("message", (event: MessageEvent<ToWorker>) => {
  const message = event.data;
  switch (message.type) {
    case "init":
      if ((message.settings as { failInit?: boolean }).failInit) {
        post({ type: "init-failed", error: "no model" });
        process.exit(1);
      }
      post({ type: "ready" });
      return;
    case "job":
      void run(message.id, (message.payload as { action: string }).action);
      return;
    case "task":
      post({ type: "task-done", result: `helped with ${message.task}` });
      return;
    case "delegated":
      answerDelegation?.(message.result);
      return;
    case "stop":
      stopRequested = true;
      if (!busy) process.exit(0);
  }
});
