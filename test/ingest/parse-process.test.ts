// The ingestion worker's parser child process, for real: kept warm between documents, and replaced by a
// fresh, small one once it has been idle a while after documents made it load pdf.js.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ParseProcess } from "../../src/ingest/parse-process.ts";
import { ensureFixtures, SHARED_SAMPLES_DIR } from "../fixtures.ts";
import { ParseError } from "../../src/ingest/parsers/index.ts";
import { pagesOverrunMessage } from "../../src/ingest/parsers/page-limit.ts";

const residentMb = (pid: number) => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

test("a child that grew while parsing is replaced by a fresh one once idle; the fresh one parses the next document", async () => {
  const pids: number[] = [];
  const parser = new ParseProcess({ memoryMb: 960, timeoutMs: 120_000, idleRecycleMs: 300, started: (pid) => pids.push(pid) });
  try {
    const pdf = join(SHARED_SAMPLES_DIR, "pdf", "sample_pdf_1.pdf");
    const parse = () => parser.parse(pdf, "pdf", "sample.pdf", new AbortController().signal);
    expect((await parse()).pageCount).toBe(4);
    // Right after a document the child is kept: the next one needs no start.
    expect(pids).toHaveLength(1);
    expect(residentMb(pids[0])).toBeGreaterThan(64);
    for (let waited = 0; pids.length < 2 && waited < 5000; waited += 50) await Bun.sleep(50);
    expect(pids).toHaveLength(2);
    await Bun.sleep(500); // its start, and more than one idle period: a fresh child is not replaced again
    expect(pids).toHaveLength(2);
    expect(residentMb(pids[1])).toBeLessThan(64);
    expect((await parse()).pageCount).toBe(4);
  } finally {
    parser.close();
  }
});

test("a document with more pages than the allowance has left fails as soon as they are counted, before OCR reads them", async () => {
  const parser = new ParseProcess({ memoryMb: 960, timeoutMs: 120_000 });
  try {
    const manifest = await ensureFixtures();
    const scan = join(manifest.dir, "sideways-scan.pdf"); // 2 pages, each read by OCR
    const parse = (left: number) => parser.parse(scan, "pdf", "scan.pdf", new AbortController().signal, { left, limit: 100 });
    const refused = await parse(1).then(
      () => null,
      (error: ParseError) => error,
    );
    expect(refused).toBeInstanceOf(ParseError);
    expect(refused!.message).toBe(
      "Document has 2 pages but only 1 of the monthly allowance of 100 pages remains. Upgrade your plan or wait for the next billing period; nothing was counted.",
    );
    expect(refused!.pageCount).toBe(2);
    expect((await parse(2)).pageCount).toBe(2);
    // Singular and plural as the counts need them (a single page is refused when it is indexed).
    expect(pagesOverrunMessage(1, { left: 0, limit: 100 })).toStartWith("Document has 1 page but only 0 of the monthly allowance of 100 pages remain. ");
  } finally {
    parser.close();
  }
}, 60_000);
