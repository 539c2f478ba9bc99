// The fast subset of the hostile-input harness (npm run fuzz runs the full set): the same generator and
// the same checks against a real server process, asserting what must never happen whatever the load on
// the machine — a 5xx, a crash, an error answer outside the spec's envelope. Timings and memory are
// printed, not asserted.
import { describe, expect, test } from "bun:test";
import { runFuzz, type CaseResult, type FuzzRun } from "../../scripts/fuzz/harness.ts";
import { renderTable, summaryLine } from "../../scripts/fuzz/report.ts";
import type { ProblemKind } from "../../scripts/fuzz/evaluate.ts";

const COUNT = 60;

function casesWith(run: FuzzRun, kinds: ProblemKind[]): string[] {
  const show = (r: CaseResult) => `#${r.id} [${r.category}] ${r.name}\n  ${r.request}\n  → ${r.response}`;
  return run.results.filter((r) => r.problems.some((p) => kinds.includes(p.kind))).map(show);
}

describe("hostile input (fast subset)", () => {
  test(
    `${COUNT} generated cases: no 5xx, no crash, every error in the envelope`,
    async () => {
      const run = await runFuzz({
        seed: 20261125,
        count: COUNT,
        bombMegabytes: 8,
        documentBudgetMs: 20_000,
        requestTimeoutMs: 30_000,
        log: (line) => console.log(`[fuzz] ${line}`),
      });
      console.log(renderTable(run));
      console.log(summaryLine(run));

      expect(run.results).toHaveLength(COUNT);
      expect(new Set(run.results.map((r) => r.category)).size).toBeGreaterThanOrEqual(17); // every category ran
      expect(casesWith(run, ["5xx"])).toEqual([]);
      expect(run.crashes).toEqual([]);
      expect(run.healthyAfter).toBe(true);
      expect(casesWith(run, ["bad-envelope", "unexpected-status", "no-response"])).toEqual([]);
    },
    180_000,
  );
});
