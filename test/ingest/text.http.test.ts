// Raw text ingestion through the API: validation, defaults, and a ready document whose chunks are in
// the chunk table, the vector index and the keyword index.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, waitForDocument, type TestServer } from "../helpers/server.ts";
import { addText, allChunks, indexRows, keywordHits, workspace } from "./ingest-helpers.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { QUARRY_LIMITS: "off" } });
});
afterAll(() => server.stop());

const ESSAY = [
  "# Penguins",
  "Emperor penguins breed during the Antarctic winter. The male keeps the egg warm on his feet for about two months.",
  "Adelie penguins build nests from small stones, and neighbours steal stones from each other.",
  "# Glaciers",
  "A glacier is a persistent body of dense ice that moves under its own weight. Glaciers cover about ten percent of land.",
].join("\n\n");

describe("POST /documents/text", () => {
  test("returns 202 pending, then becomes ready with indexed, searchable chunks", async () => {
    const ws = await workspace(server);
    const res = await addText(server, ws, { text: ESSAY, name: "nature.txt", metadata: { topic: "nature", year: 2024 } });
    expect(res.status).toBe(202);
    const doc = res.body.data;
    expect(doc).toMatchObject({
      kb_id: ws.kbId,
      account_id: ws.account.id,
      name: "nature.txt",
      file_type: "txt",
      file_size_bytes: Buffer.byteLength(ESSAY),
      page_count: null,
      chunk_count: 0,
      status: "pending",
      error_detail: null,
      metadata: { topic: "nature", year: 2024 },
    });
    expect(doc.id).toMatch(/^doc_[0-9a-z]+$/);
    expect(doc.storage_path).toMatch(new RegExp(`^files/${ws.kbId}/${doc.id}/.+\\.txt$`));

    const ready = await waitForDocument(server, ws.account.apiKey, ws.kbId, doc.id);
    expect(ready.status).toBe("ready");
    expect(ready.chunk_count).toBeGreaterThan(0);
    expect(ready.page_count).toBeNull();
    expect(ready.metadata).toEqual({ topic: "nature", year: 2024 });

    const chunks = await allChunks(server, ws, doc.id);
    expect(chunks.length).toBe(ready.chunk_count);
    for (const [i, chunk] of chunks.entries()) {
      expect(Object.keys(chunk).sort()).toEqual(
        ["id", "document_id", "kb_id", "text", "chunk_index", "start_page", "end_page", "section_heading", "token_count", "metadata", "created_at"].sort(),
      );
      expect(chunk).toMatchObject({ document_id: doc.id, kb_id: ws.kbId, chunk_index: i, start_page: null, end_page: 1 });
      expect(chunk.id).toMatch(/^chk_/);
      expect(chunk.token_count).toBeGreaterThan(0);
    }
    expect(chunks.map((c) => c.text).join(" ")).toContain("Emperor penguins breed");

    const rows = indexRows(server.server.ctx.db, doc.id);
    expect(rows).toEqual({ chunks: ready.chunk_count, vectors: ready.chunk_count});
    expect(await keywordHits(server, ws, "glacier")).toEqual([doc.id]);
  });

  test("the default name is text-<ISO timestamp>.txt", async () => {
    const ws = await workspace(server);
    const before = new Date().toISOString();
    const res = await addText(server, ws, { text: "short note" });
    expect(res.status).toBe(202);
    const match = /^text-(.+)\.txt$/.exec(res.body.data.name);
    expect(match).not.toBeNull();
    expect(new Date(match![1]).toISOString()).toBe(match![1]);
    expect(match![1] >= before).toBe(true);
    // The same instant as the document's creation.
    expect(match![1]).toBe(res.body.data.created_at);
    expect(res.body.data.metadata).toEqual({});
  });

  test("a name without .txt is kept as given and the file is still stored as .txt", async () => {
    const ws = await workspace(server);
    const res = await addText(server, ws, { text: "meeting notes", name: "Weekly sync" });
    expect(res.body.data.name).toBe("Weekly sync");
    expect(res.body.data.file_type).toBe("txt");
    expect(res.body.data.storage_path).toEndWith("/Weekly sync.txt");
  });

  test("a name is kept whole, slashes and all (it is no path); the stored file's name has underscores for them", async () => {
    const ws = await workspace(server);
    for (const [name, stored] of [
      ["Q3/Q4 revenue: summary", "/Q3_Q4 revenue summary.txt"],
      ["../sub/report", "/file._sub_report.txt"],
      ["a/", "/a_.txt"],
    ]) {
      const res = await addText(server, ws, { text: "quarterly revenue grew", name });
      expect([res.status, res.body.data.name]).toEqual([202, name]);
      expect(res.body.data.storage_path).toEndWith(stored);
      expect(res.body.data.storage_path.split("/")).not.toContain("..");
    }
  });

  test("NUL characters in the text are dropped: it is not read as a binary file", async () => {
    const ws = await workspace(server);
    const res = await addText(server, ws, { text: "\u0000\u0000Lighthouse\u0000 logbook entries", name: "nul.txt" });
    expect(res.status).toBe(202);
    const ready = await waitForDocument(server, ws.account.apiKey, ws.kbId, res.body.data.id);
    expect([ready.status, ready.error_detail]).toEqual(["ready", null]);
    expect((await allChunks(server, ws, ready.id)).map((chunk) => chunk.text)).toEqual(["Lighthouse logbook entries"]);
  });

  test("text in any script is cut between characters as read, emoji count as tokens, and joiners stay in the text", async () => {
    const ws = await workspace(server);
    const texts = {
      ideographs: `a${"\u{20000}".repeat(3000)}`, // of a supplementary plane: two UTF-16 units each
      accents: "e\u0301".repeat(3000), // a letter and its combining mark
      emoji: "😀".repeat(3000), // counted as 2 tokens by the model, were one chunk
      families: "👨‍👩‍👧".repeat(1500),
      flags: ("😀".repeat(300) + "🇺🇸🇫🇷🇩🇪🇯🇵".repeat(20)).repeat(3), // a flag's two letters pair up from their run's start
      beyondCountedSlice: `${"b".repeat(8191)}😀`, // a pair across the 8,192-unit slice a long word is counted in (failed the document)
    };
    for (const [name, text] of Object.entries(texts)) {
      const res = await addText(server, ws, { text, name: `${name}.txt` });
      expect((await waitForDocument(server, ws.account.apiKey, ws.kbId, res.body.data.id)).status).toBe("ready");
      const chunks = (await allChunks(server, ws, res.body.data.id)).map((chunk) => chunk.text as string);
      expect([name, chunks.length > 1]).toEqual([name, true]);
      for (const chunk of chunks) {
        expect([name, chunk.isWellFormed(), chunk.includes("\ufffd"), /^[\u0301\u200d]|\u200d$/.test(chunk)]).toEqual([name, true, false, false]);
        expect(text.includes(chunk)).toBe(true);
        // whole flags only: an even run of their letters at each end
        expect([name, (chunk.match(/^(?:\p{RI})+|(?:\p{RI})+$/gu) ?? []).every((run) => [...run].length % 2 === 0)]).toEqual([name, true]);
      }
    }
    // Joiners are part of how a word is written (the family emoji, Persian); keyword search reads the word without them
    const res = await addText(server, ws, { text: "The 👨‍👩‍👧 family says \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 often.", name: "joiners.txt" });
    await waitForDocument(server, ws.account.apiKey, ws.kbId, res.body.data.id);
    expect((await allChunks(server, ws, res.body.data.id)).map((chunk) => chunk.text)).toEqual(["The 👨‍👩‍👧 family says \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 often."]);
    for (const query of ["\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", "\u0645\u06cc\u062e\u0648\u0627\u0647\u0645"]) expect(await keywordHits(server, ws, query)).toEqual([res.body.data.id]);
    // A query to embed is cleaned as the text was: a soft hyphen pasted with it changes nothing
    const vector = async (query: string) => (await server.request("POST", `/v1/knowledge-bases/${ws.kbId}/search`, { token: ws.account.apiKey, body: { query, mode: "vector", top_k: 1 } })).body.data;
    const [plain, hyphenated] = [await vector("extraordinary family"), await vector("extra\u00adordinary fam\u200bily")];
    expect([hyphenated.results[0].score, hyphenated.usage.embedding_tokens]).toEqual([plain.results[0].score, plain.usage.embedding_tokens]);
  }, 120_000);

  test("a chunk's token_count is the model's count of its text, the line breaks between its paragraphs included", async () => {
    const ws = await workspace(server);
    const text = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} holds eight short words in it.`).join("\n\n");
    const res = await addText(server, ws, { text, name: "paragraphs.txt" });
    expect((await waitForDocument(server, ws.account.apiKey, ws.kbId, res.body.data.id)).status).toBe("ready");
    for (const chunk of await allChunks(server, ws, res.body.data.id)) {
      // A search embeds its query with the same model and says how many tokens that took.
      const search = await server.request("POST", `/v1/knowledge-bases/${ws.kbId}/search`, { token: ws.account.apiKey, body: { query: chunk.text, mode: "vector", top_k: 1 } });
      expect(Math.abs(chunk.token_count - search.body.data.usage.embedding_tokens)).toBeLessThanOrEqual(1);
    }
  });

  test("validates text, name and metadata", async () => {
    const ws = await workspace(server);
    const cases: [unknown, string][] = [
      [{}, "text"],
      [{ text: "" }, "text"],
      [{ text: 42 }, "text"],
      [{ text: "x".repeat(10_000_001) }, "text"],
      [{ text: "ok", name: "n".repeat(257) }, "name"],
      [{ text: "ok", name: "😀".repeat(257) }, "name"],
      [{ text: "ok", name: "" }, "name"],
      [{ text: "ok", metadata: [1, 2] }, "metadata"],
      [{ text: "ok", metadata: "team" }, "metadata"],
    ];
    for (const [body, field] of cases) {
      const res = await addText(server, ws, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("VALIDATION_ERROR");
      expect(res.body.error.details.issues[0].path).toEqual([field]);
    }
    expect((await addText(server, ws, { text: "ok", name: "n".repeat(256) })).status).toBe(202);
    // Characters are code points, as for every other limit: 256 emoji are 512 UTF-16 units.
    expect((await addText(server, ws, { text: "ok", name: "😀".repeat(256) })).status).toBe(202);
    const list = await server.request("GET", ws.docs, { token: ws.account.apiKey });
    expect(list.body.data.length).toBe(2);
  });

  test("the largest allowed text (10,000,000 characters) is accepted", async () => {
    const ws = await workspace(server);
    const res = await addText(server, ws, { text: "word ".repeat(2_000_000) });
    expect(res.status).toBe(202);
    expect(res.body.data.file_size_bytes).toBe(10_000_000);
    // Not waited for: embedding ten megabytes is benchmark territory. Delete it so the worker drops it.
    const del = await server.request("DELETE", `${ws.docs}/${res.body.data.id}`, { token: ws.account.apiKey });
    expect(del.status).toBe(200);
  });

  test("10,000,000 characters fit in the body also written as JSON escapes (\\u732b: 60 MB); a larger body is 400 at body", async () => {
    const ws = await workspace(server);
    const escaped = (count: number) => `{"text":"${"\\u732b".repeat(count)}"}`;
    const res = await server.request("POST", `${ws.docs}/text`, { token: ws.account.apiKey, body: escaped(10_000_000) });
    expect(res.status).toBe(202);
    expect(res.body.data.file_size_bytes).toBe(30_000_000); // 猫 is 3 bytes of UTF-8
    await server.request("DELETE", `${ws.docs}/${res.body.data.id}`, { token: ws.account.apiKey });
    const over = await server.request("POST", `${ws.docs}/text`, { token: ws.account.apiKey, body: escaped(10_200_000) });
    expect(over.status).toBe(400);
    expect(over.body.error.details.issues).toEqual([{ path: ["body"], message: "is too large: 61200011 bytes; the maximum is 61048576 bytes (10000000 characters of text)" }]);
  });
});
