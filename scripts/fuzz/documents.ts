// Documents the cases created: polled until ready or failed (or out of time), then deleted so the trial's
// document count and storage stay free for the next cases.
import { sendPolitely, type Target } from "./api.ts";

export interface TrackedDocument {
  kbId: string;
  docId: string;
  caseId: number;
  category: string;
  caseName: string;
  since: number;
  authorization: string;
  /** The attacker's own long-lived document (a PUT replaced it): polled, never deleted. */
  keep: boolean;
}

export interface DocumentOutcome {
  doc: TrackedDocument;
  status: string;
  seconds: number;
  errorDetail?: string;
}

const TERMINAL = new Set(["ready", "failed"]);

export class DocumentTracker {
  private readonly pending: TrackedDocument[] = [];
  readonly outcomes: DocumentOutcome[] = [];

  constructor(
    private readonly target: () => Target,
    private readonly budgetMs: number,
  ) {}

  track(doc: TrackedDocument): void {
    if (!this.pending.some((d) => d.docId === doc.docId)) this.pending.push(doc);
  }

  get open(): number {
    return this.pending.length;
  }

  /** Polls every pending document once; settles the ones that are terminal or out of time. */
  async sweep(): Promise<void> {
    for (const doc of [...this.pending]) {
      const path = `/api/v1/knowledge-bases/${doc.kbId}/documents/${doc.docId}`;
      const { response } = await sendPolitely(this.target(), { method: "GET", path, credential: { kind: "none" } }, doc.authorization);
      const data = (response.json as any)?.data;
      const status: string = response.status === 404 ? "deleted" : (data?.status ?? `http ${response.status}`);
      const elapsed = Date.now() - doc.since;
      if (!TERMINAL.has(status) && status !== "deleted" && elapsed < this.budgetMs) continue;
      const outcome: DocumentOutcome = { doc, status: TERMINAL.has(status) || status === "deleted" ? status : `stuck in ${status}`, seconds: elapsed / 1000 };
      if (data?.error_detail) outcome.errorDetail = String(data.error_detail).slice(0, 200);
      this.outcomes.push(outcome);
      this.pending.splice(this.pending.indexOf(doc), 1);
      if (!doc.keep && status !== "deleted") await sendPolitely(this.target(), { method: "DELETE", path, credential: { kind: "none" } }, doc.authorization);
    }
  }

  /** Sweeps until nothing is pending (each document has its own time budget). */
  async drain(): Promise<void> {
    while (this.pending.length > 0) {
      await this.sweep();
      if (this.pending.length > 0) await Bun.sleep(500);
    }
  }

  /** Sweeps until at most `max` documents are pending. */
  async waitBelow(max: number): Promise<void> {
    while (this.pending.length > max) {
      await this.sweep();
      if (this.pending.length > max) await Bun.sleep(500);
    }
  }

  get stuck(): DocumentOutcome[] {
    return this.outcomes.filter((o) => o.status.startsWith("stuck"));
  }
}
