// Turns a run into the pass criteria, a readable table and one JSON summary line.
import type { CaseResult, FuzzRun } from "./harness.ts";
import { NOTES, type ProblemKind } from "./evaluate.ts";

export interface Limits {
  rssBytes: number;
  bystanderP95Ms: number;
}

export const DEFAULT_LIMITS: Limits = { rssBytes: 1.5 * 2 ** 30, bystanderP95Ms: 100 };

export interface Criterion {
  name: string;
  pass: boolean;
  value: string;
}

const MB = 2 ** 20;

export function isFailing(result: CaseResult): boolean {
  return result.problems.some((p) => !NOTES.includes(p.kind));
}

function countProblems(run: FuzzRun, kind: ProblemKind): number {
  return run.results.filter((r) => r.problems.some((p) => p.kind === kind)).length;
}

export function criteria(run: FuzzRun, limits: Limits = DEFAULT_LIMITS): Criterion[] {
  const fiveXx = countProblems(run, "5xx");
  const envelope = countProblems(run, "bad-envelope") + countProblems(run, "unexpected-status") + countProblems(run, "no-response");
  const unsafe = countProblems(run, "unsafe-storage-path") + run.leftoverFiles.length;
  const stuck = run.documents.filter((d) => d.status.startsWith("stuck")).length;
  return [
    { name: "cases sent", pass: run.results.length >= run.options.count, value: String(run.results.length) },
    { name: "responses with status >= 500", pass: fiveXx === 0, value: String(fiveXx) },
    { name: "crashes (exit or unhealthy)", pass: run.crashes.length === 0 && run.healthyAfter, value: `${run.crashes.length}, healthy after: ${run.healthyAfter}` },
    { name: `peak RSS of the server's process tree <= ${Math.round(limits.rssBytes / MB)} MB`, pass: run.peakRssBytes <= limits.rssBytes, value: `${Math.round(run.peakRssBytes / MB)} MB with child processes (server alone ${Math.round(run.peakProcessRssBytes / MB)} MB)` },
    {
      name: `bystander GET p95 < ${limits.bystanderP95Ms} ms`,
      pass: run.background.p95 < limits.bystanderP95Ms && run.background.failed === 0,
      value: `p50 ${run.background.p50.toFixed(1)} / p95 ${run.background.p95.toFixed(1)} / max ${run.background.max.toFixed(1)} ms over ${run.background.count} (non-200 ${run.background.non200}, failed ${run.background.failed})`,
    },
    { name: "uploaded documents end ready/failed in budget", pass: stuck === 0, value: `${run.documents.length - stuck} of ${run.documents.length} (stuck ${stuck})` },
    { name: "error answers are 4xx with the envelope", pass: envelope === 0, value: `${envelope} violations` },
    { name: "invalid input rejected", pass: countProblems(run, "accepted-invalid") === 0, value: `${countProblems(run, "accepted-invalid")} accepted` },
    { name: "no unsafe storage paths or stray files", pass: unsafe === 0, value: String(unsafe) },
  ];
}

/** Which cases and document processing overlapped a moment or span of the run. */
function inFlight(run: FuzzRun, from: number, to: number): string {
  const cases = run.results.filter((r) => r.at <= to && from <= r.at + r.ms).map((r) => `#${r.id} ${r.name}`);
  // a case the harness gave up on may still be running in the server
  const before = run.results.filter((r) => r.at + r.ms < from).at(-1);
  if (cases.length === 0 && before) cases.push(`none (the last one, ${((from - before.at - before.ms) / 1000).toFixed(1)} s earlier: #${before.id} ${before.name}, ${before.status || "no answer"})`);
  const processing = run.documents.filter((d) => d.doc.since <= to && from <= d.doc.since + d.seconds * 1000).map((d) => `#${d.doc.caseId} ${d.doc.caseName}`);
  return `at +${((from - run.startedAt) / 1000).toFixed(1)} s; cases: ${cases.join(", ") || "none"}; processing: ${processing.join(", ") || "none"}`;
}

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + " ".repeat(width - text.length);
}

export function renderTable(run: FuzzRun, limits: Limits = DEFAULT_LIMITS): string {
  const lines: string[] = [];
  const byCategory = new Map<string, { cases: number; failing: number; fiveXx: number; statuses: Map<number, number> }>();
  for (const r of run.results) {
    const row = byCategory.get(r.category) ?? { cases: 0, failing: 0, fiveXx: 0, statuses: new Map() };
    row.cases++;
    if (isFailing(r)) row.failing++;
    if (r.status >= 500) row.fiveXx++;
    row.statuses.set(r.status, (row.statuses.get(r.status) ?? 0) + 1);
    byCategory.set(r.category, row);
  }
  lines.push(`${pad("category", 22)}${pad("cases", 7)}${pad("failing", 9)}${pad("5xx", 5)}statuses`);
  for (const [name, row] of byCategory) {
    const statuses = [...row.statuses].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}×${n}`).join(" ");
    lines.push(`${pad(name, 22)}${pad(String(row.cases), 7)}${pad(String(row.failing), 9)}${pad(String(row.fiveXx), 5)}${statuses}`);
  }
  lines.push("", `${pad("criterion", 58)}${pad("result", 6)}value`);
  for (const c of criteria(run, limits)) lines.push(`${pad(c.name, 58)}${pad(c.pass ? "PASS" : "FAIL", 6)}${c.value}`);
  const failing = run.results.filter(isFailing);
  if (failing.length) {
    lines.push("", `failing cases (${failing.length}):`);
    for (const r of failing) {
      lines.push(`#${r.id} [${r.category}] ${r.name} — ${r.problems.map((p) => `${p.kind}: ${p.detail}`).join("; ")}`);
      lines.push(`    request:  ${r.request}`, `    response: ${r.response}`);
    }
  }
  const noted = run.results.filter((r) => !isFailing(r) && r.problems.length);
  if (noted.length) lines.push("", `noted, not failing: ${noted.map((r) => `#${r.id} ${r.name} (${r.problems.map((p) => p.detail).join("; ")})`).join(", ")}`);
  const stuck = run.documents.filter((d) => d.status.startsWith("stuck"));
  for (const d of stuck) lines.push(`stuck document ${d.doc.docId} from case #${d.doc.caseId} [${d.doc.category}] ${d.doc.caseName}: ${d.status} after ${d.seconds.toFixed(0)} s`);
  const slow = [...run.documents].sort((a, b) => b.seconds - a.seconds).slice(0, 5);
  if (slow.length) {
    lines.push("", "slowest documents:");
    for (const d of slow) lines.push(`  ${d.seconds.toFixed(1)} s ${d.status} #${d.doc.caseId} [${d.doc.category}] ${d.doc.caseName}${d.errorDetail ? ` — ${d.errorDetail}` : ""}`);
  }
  lines.push("", "slowest answers to cases:");
  for (const r of [...run.results].sort((a, b) => b.ms - a.ms).slice(0, 5)) lines.push(`  ${r.ms} ms ${r.status} #${r.id} [${r.category}] ${r.name}`);
  lines.push("", "slowest bystander requests, with the cases in flight and documents being processed then:");
  for (const s of run.background.slowest) lines.push(`  ${s.ms.toFixed(0)} ms ${inFlight(run, s.at, s.at + s.ms)}`);
  lines.push("", `peak RSS ${Math.round(run.peakRssBytes / MB)} MB ${inFlight(run, run.peakRssAt, run.peakRssAt)}`);
  for (const c of run.crashes) lines.push(`crash: ${c.detail}`);
  for (const f of run.leftoverFiles) lines.push(`stray file: ${f}`);
  const logged = run.serverErrors.filter((l) => /failed:|error/i.test(l)).slice(0, 10);
  if (logged.length) lines.push("", "server stderr (first lines mentioning errors):", ...logged.map((l) => `  ${l}`));
  return lines.join("\n");
}

export function summaryLine(run: FuzzRun, limits: Limits = DEFAULT_LIMITS): string {
  const perCategory: Record<string, number> = {};
  for (const r of run.results) perCategory[r.category] = (perCategory[r.category] ?? 0) + 1;
  const list = criteria(run, limits);
  return JSON.stringify({
    fuzz: "quarry",
    seed: run.options.seed,
    cases: run.results.length,
    per_category: perCategory,
    status_5xx: countProblems(run, "5xx"),
    crashes: run.crashes.length,
    healthy_after: run.healthyAfter,
    peak_rss_mb: Math.round(run.peakRssBytes / MB),
    peak_server_process_rss_mb: Math.round(run.peakProcessRssBytes / MB),
    bystander_ms: { p50: +run.background.p50.toFixed(1), p95: +run.background.p95.toFixed(1), max: +run.background.max.toFixed(1), count: run.background.count },
    documents: run.documents.length,
    stuck_documents: run.documents.filter((d) => d.status.startsWith("stuck")).length,
    failing_cases: run.results.filter(isFailing).map((r) => r.id),
    http_layer_4xx: countProblems(run, "http-layer"),
    attacker_accounts: run.attackerAccounts,
    duration_s: Math.round(run.durationMs / 1000),
    pass: Object.fromEntries(list.map((c) => [c.name, c.pass])),
    ok: list.every((c) => c.pass),
  });
}
