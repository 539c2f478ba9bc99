// The search threads are counted from the CPUs, whatever has run in the process before. pdfjs-dist's legacy
// build replaces `navigator`, and under Bun os.availableParallelism() reads it: once a PDF had been parsed
// in the process, it returned undefined, the server started no search thread, and every search of a segment
// waited forever. The server parses in child processes; the tests parse in their own process, and a test
// that ran after the parser tests hung.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { parseDocument, ParseError } from "../../src/ingest/parsers/index.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addDocs, createKb, search, waitForSegment } from "./search-helpers.ts";

let server: TestServer;
beforeAll(async () => {
  // Loads pdfjs in this process, as a parser test does.
  await expect(parseDocument("pdf", new Uint8Array(0), "empty.pdf")).rejects.toBeInstanceOf(ParseError);
  server = await startTestServer({ env: { QUARRY_SEGMENT_MIN_CHANGES: "3", QUARRY_LIMITS: "off" }, segmentQuietMs: 500 });
});
afterAll(() => server.stop());

test("a segment is searched in a process where pdfjs has run", async () => {
  const kb = await createKb(server);
  await addDocs(server, kb, Array.from({ length: 4 }, (_, i) => ({ name: `otter-${i}`, text: `An otter crossed the weir at dawn on day ${i}.` })));
  await waitForSegment(server.dataDir, kb.kbId);
  const answered = await Promise.race([search(server, kb, { query: "otter weir day 2", mode: "keyword", top_k: 1 }), Bun.sleep(20_000).then(() => null)]);
  expect(answered?.results[0].document_id).toBe(kb.docs["otter-2"]);
});
