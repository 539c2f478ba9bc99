// The HTTP thread's side of the index worker (index-worker.ts): starts it, nudges it when a knowledge
// base piled up changes, hands each published segment to `onBuilt`, restarts the worker should it die.
import type { FromIndexWorker, IndexWorkerSettings, ToIndexWorker } from "./index-worker-protocol.ts";
import { stopWorker } from "../worker-stop.ts";

export type SegmentBuilt = Extract<FromIndexWorker, { type: "built" }>;

const RESTART_DELAY_MS = 5_000;
const STOP_GRACE_MS = 2_000;

export class SegmentBuilds {
  private worker: Worker | null = null;
  private stopped = false;
  private restartTimer?: Timer;

  constructor(
    private readonly settings: IndexWorkerSettings,
    private readonly onBuilt: (segment: SegmentBuilt) => void,
    private readonly log: (message: string) => void = (message) => console.error(message),
  ) {}

  start(): void {
    if (this.worker || this.stopped) return;
    const worker = new Worker(new URL("./index-worker.ts", import.meta.url).href);
    worker.onmessage = (event: MessageEvent<FromIndexWorker>) => this.receive(event.data);
    worker.addEventListener("close", () => {
      if (this.worker !== worker || this.stopped) return;
      this.worker = null;
      this.log("search index worker exited; restarting it");
      this.restartTimer = setTimeout(() => this.start(), RESTART_DELAY_MS);
    });
    // The worker must not keep the process alive on its own (tests and CLI commands end when done).
    (worker as Worker & { unref(): void }).unref();
    this.worker = worker;
    this.send({ type: "init", settings: this.settings });
  }

  /** Asks the worker to look for knowledge bases due for a new segment now rather than at its next poll. */
  nudge(): void {
    this.send({ type: "check" });
  }

  /** Lets the worker close its database connection (unless a build keeps it busy past STOP_GRACE_MS), then ends it. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.restartTimer);
    const worker = this.worker;
    this.worker = null;
    if (worker) await stopWorker(worker, { type: "stop" } satisfies ToIndexWorker, "stopped" satisfies FromIndexWorker["type"], STOP_GRACE_MS);
  }

  private send(message: ToIndexWorker): void {
    this.worker?.postMessage(message);
  }

  private receive(message: FromIndexWorker): void {
    if (message.type === "built") this.onBuilt(message);
    else if (message.type === "error") this.log(`search index: ${message.kbId ? `knowledge base ${message.kbId}: ` : ""}${message.message}`);
  }
}
