// npm run fuzz [-- --seed N --count N --bomb-mb N --doc-budget-s N --timeout-s N --rss-limit-mb N] (or FUZZ_SEED, FUZZ_COUNT…): the hostile-input
// harness against a fresh server process. Prints a table and, last, one JSON summary line; exits 1 when a
// criterion fails.
import { runFuzz } from "./harness.ts";
import { DEFAULT_LIMITS, criteria, renderTable, summaryLine } from "./report.ts";

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  const raw = at >= 0 ? process.argv[at + 1] : process.env[`FUZZ_${name.toUpperCase().replaceAll("-", "_")}`];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a non-negative number, got "${raw}"`);
  return value;
}

const run = await runFuzz({
  seed: option("seed", 1),
  count: option("count", 500),
  bombMegabytes: option("bomb-mb", 300),
  documentBudgetMs: option("doc-budget-s", 120) * 1000,
  requestTimeoutMs: option("timeout-s", 60) * 1000,
  log: (line) => console.error(`[fuzz] ${line}`),
});
const limits = { ...DEFAULT_LIMITS, rssBytes: option("rss-limit-mb", DEFAULT_LIMITS.rssBytes / 2 ** 20) * 2 ** 20 };
console.log(renderTable(run, limits));
console.log(summaryLine(run, limits));
process.exit(criteria(run, limits).every((c) => c.pass) ? 0 : 1);
