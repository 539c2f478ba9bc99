// Every supported file type through the real pipeline: generated fixtures of all 16 extensions and the
// shared real-world samples reach ready with the right page_count and searchable, page-tagged chunks;
// damaged files of every rich type end failed with a clear message and leave nothing in the index.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { startTestServer, waitForDocument, type TestServer } from "../helpers/server.ts";
import { ensureFixtures, SHARED_SAMPLES, SHARED_SAMPLES_DIR, type DocumentFixture, type FixtureManifest } from "../fixtures.ts";
import { allChunks, indexRows, keywordHits, upload, workspace, type Workspace } from "./ingest-helpers.ts";

// Test names are registered before beforeAll runs, so the fixtures are made (once) at load time.
const manifest: FixtureManifest = await ensureFixtures();
let server: TestServer;
let ws: Workspace;
/** Document id per fixture path, all uploaded at once so the two workers stay busy. */
const uploaded = new Map<string, string>();

const ALL_TYPES = ["pdf", "docx", "pptx", "xlsx", "png", "jpg", "jpeg", "webp", "tiff", "txt", "md", "html", "htm", "csv", "tsv", "json"];

async function uploadFile(path: string): Promise<void> {
  const file = new File([await Bun.file(path).arrayBuffer()], path.split("/").pop()!);
  const res = await upload(server, ws, file);
  if (res.status !== 202) throw new Error(`upload of ${path} failed: ${res.status} ${JSON.stringify(res.body)}`);
  uploaded.set(path, res.body.data.id);
}

beforeAll(async () => {
  server = await startTestServer({ env: { QUARRY_LIMITS: "off", QUARRY_WORKERS: "2" } });
  ws = await workspace(server);
  for (const fixture of manifest.documents) await uploadFile(join(manifest.dir, fixture.file));
  for (const fixture of manifest.rejected) await uploadFile(join(manifest.dir, fixture.file));
  for (const sample of SHARED_SAMPLES) await uploadFile(join(SHARED_SAMPLES_DIR, sample.file));
});
afterAll(() => server.stop());

const normalize = (text: string) => text.toLowerCase().replace(/\s+/g, " ");

/** An FTS5 phrase query for the words of a phrase. */
function phraseQuery(text: string): string {
  const words = text.match(/[\p{L}\p{N}]+/gu) ?? [];
  return `"${words.join(" ")}"`;
}

async function expectIngested(path: string, fixture: DocumentFixture) {
  const id = uploaded.get(path)!;
  const doc = await waitForDocument(server, ws.account.apiKey, ws.kbId, id, 240_000);
  expect({ file: fixture.file, status: doc.status, error: doc.error_detail }).toEqual({ file: fixture.file, status: "ready", error: null });
  expect(doc.file_type).toBe(fixture.type);
  expect(doc.page_count).toBe(fixture.pageCount);

  const chunks = await allChunks(server, ws, id);
  expect(chunks.length).toBe(doc.chunk_count);
  expect(chunks.map((c) => c.chunk_index)).toEqual(chunks.map((_, i) => i));
  for (const chunk of chunks) {
    expect(chunk.text.trim().length).toBeGreaterThan(0);
    if (fixture.pageCount === null) {
      expect([chunk.start_page, chunk.end_page]).toEqual([null, 1]);
    } else {
      expect(chunk.start_page).toBeGreaterThanOrEqual(1);
      expect(chunk.end_page).toBeGreaterThanOrEqual(chunk.start_page);
      expect(chunk.end_page).toBeLessThanOrEqual(fixture.pageCount);
    }
  }
  for (const phrase of fixture.phrases) {
    const holder = chunks.find((c) => normalize(c.text).includes(normalize(phrase.text)));
    expect({ file: fixture.file, phrase: phrase.text, found: holder !== undefined }).toEqual({ file: fixture.file, phrase: phrase.text, found: true });
    if (phrase.page !== null) {
      expect(holder.start_page).toBeLessThanOrEqual(phrase.page);
      expect(holder.end_page).toBeGreaterThanOrEqual(phrase.page);
    }
    if (phrase.heading) {
      // Cited under its own heading: sections are never merged into one chunk (chunker.ts).
      const underHeading = chunks.some((c) => normalize(c.text).includes(normalize(phrase.text)) && c.section_heading === phrase.heading);
      expect({ phrase: phrase.text, heading: phrase.heading, underHeading }).toEqual({ phrase: phrase.text, heading: phrase.heading, underHeading: true });
    }
    if (!fixture.ocr) expect(await keywordHits(server, ws, phraseQuery(phrase.text))).toContain(id);
  }
  expect(indexRows(server.server.ctx.db, id)).toEqual({ chunks: doc.chunk_count, vectors: doc.chunk_count});
}

describe("generated fixtures", () => {
  test("cover all 16 supported extensions", () => {
    const types = new Set(manifest.documents.map((d) => d.type));
    expect([...types].sort()).toEqual([...ALL_TYPES].sort());
  });

  for (const fixture of manifest.documents) {
    test(`${fixture.file} (${fixture.type}) becomes ready with ${fixture.pageCount ?? "no"} pages`, () =>
      expectIngested(join(manifest.dir, fixture.file), fixture));
  }
});

describe("shared real-world samples", () => {
  for (const sample of SHARED_SAMPLES) {
    test(`${sample.file} becomes ready with ${sample.pageCount ?? "no"} pages`, () => expectIngested(join(SHARED_SAMPLES_DIR, sample.file), sample));
  }
});

describe("damaged files", () => {
  for (const rejected of manifest.rejected) {
    test(`${rejected.file} fails with "${rejected.error}"`, async () => {
      const id = uploaded.get(join(manifest.dir, rejected.file))!;
      const doc = await waitForDocument(server, ws.account.apiKey, ws.kbId, id, 240_000);
      expect(doc.status).toBe("failed");
      expect(doc.error_detail.startsWith(rejected.error)).toBe(true);
      expect(doc.chunk_count).toBe(0);
      // A document over the page limit still says how many pages it has.
      const overLimit = /^Document has (\d+) pages/.exec(rejected.error);
      expect(doc.page_count).toBe(overLimit ? Number(overLimit[1]) : null);
      expect(indexRows(server.server.ctx.db, id)).toEqual({ chunks: 0, vectors: 0});
    });
  }

  test("a PDF with one damaged page is ready with its other pages' text; with every page damaged it fails", async () => {
    const damaged = deflateSync("BT /F1 18 Tf 72 700 Td (Page two about egrets, long enough to damage the middle of its stream) Tj ET");
    damaged.fill(0x41, 12, 40);
    const stream = (body: Uint8Array, filter = "") => Buffer.concat([Buffer.from(`<< /Length ${body.length}${filter} >>\nstream\n`, "latin1"), body, Buffer.from("\nendstream")]);
    const pdf = (pages: Buffer[], brokenPage = -1) => {
      const objects = [
        Buffer.from("<< /Type /Catalog /Pages 2 0 R >>"),
        Buffer.from(`<< /Type /Pages /Kids [${pages.map((_, i) => `${4 + 2 * i} 0 R`).join(" ")}] /Count ${pages.length} >>`),
        Buffer.from("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"),
        ...pages.flatMap((content, i) => [
          i === brokenPage
            ? Buffer.from("(not a page dictionary)")
            : Buffer.from(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${5 + 2 * i} 0 R /Resources << /Font << /F1 3 0 R >> >> >>`),
          content,
        ]),
      ];
      const parts = [Buffer.from("%PDF-1.4\n")];
      const offsets: number[] = [];
      let length = parts[0]!.length;
      objects.forEach((object, i) => {
        offsets.push(length);
        const part = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), object, Buffer.from("\nendobj\n")]);
        parts.push(part);
        length += part.length;
      });
      const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`;
      parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`));
      return new Uint8Array(Buffer.concat(parts));
    };
    const good = stream(Buffer.from("BT /F1 18 Tf 72 700 Td (Page one about herons) Tj ET"));
    const bad = stream(damaged, " /Filter /FlateDecode");

    const partly = await upload(server, ws, new File([pdf([good, bad])], "one-bad-page.pdf"));
    const doc = await waitForDocument(server, ws.account.apiKey, ws.kbId, partly.body.data.id);
    expect({ status: doc.status, page_count: doc.page_count, error: doc.error_detail }).toEqual({ status: "ready", page_count: 2, error: null });
    expect((await allChunks(server, ws, doc.id)).map((chunk) => [chunk.text, chunk.start_page, chunk.end_page])).toEqual([["Page one about herons", 1, 1]]);

    // No readable page, or a page that cannot be loaded at all (pdf.js would count only the pages before it).
    for (const [name, file] of [["all-bad-pages.pdf", pdf([bad, bad])], ["broken-page-tree.pdf", pdf([good, good, good], 1)]] as const) {
      const res = await upload(server, ws, new File([file], name));
      const failed = await waitForDocument(server, ws.account.apiKey, ws.kbId, res.body.data.id);
      expect({ name, status: failed.status, error: failed.error_detail }).toEqual({ name, status: "failed", error: "Not a valid PDF file" });
    }
  });

  test("every rich type has a damaged sample", () => {
    const types = new Set(manifest.rejected.map((r) => r.type));
    for (const type of ["pdf", "docx", "pptx", "xlsx", "png", "jpg", "jpeg", "webp", "tiff"]) expect(types.has(type)).toBe(true);
  });
});

describe("images are read by their content", () => {
  test("a JPEG saved as .tiff and a two-page TIFF saved as .png are read as what they are", async () => {
    const renamed = [
      { from: "tugboat.jpeg", name: "tugboat.tiff", pages: 1, phrase: "harbour tugboat schedule" },
      { from: "timetable.tiff", name: "timetable.png", pages: 2, phrase: "museum opening hours" },
    ];
    for (const { from, name, pages, phrase } of renamed) {
      const res = await upload(server, ws, new File([await Bun.file(join(manifest.dir, from)).arrayBuffer()], name));
      expect(res.status).toBe(202);
      const doc = await waitForDocument(server, ws.account.apiKey, ws.kbId, res.body.data.id, 240_000);
      expect({ name, status: doc.status, error: doc.error_detail, pages: doc.page_count }).toEqual({ name, status: "ready", error: null, pages });
      const chunks = await allChunks(server, ws, doc.id);
      expect({ name, found: chunks.some((chunk) => normalize(chunk.text).includes(phrase)) }).toEqual({ name, found: true });
    }
  });
});

describe("code keeps its indentation", () => {
  test("a Markdown fence and an HTML <pre> come back with their lines indented as written", async () => {
    const code = "def f(x):\n    if x:\n        return 1\n    return 0";
    const files = [
      new File([`# Helpers\n\nA function.\n\n\`\`\`python\n${code}\n\`\`\`\n`], "helpers.md"),
      new File([`<h1>Helpers</h1><p>A function.</p><pre>\n${code}</pre>`], "helpers.html"),
    ];
    for (const file of files) {
      const res = await upload(server, ws, file);
      expect(res.status).toBe(202);
      expect((await waitForDocument(server, ws.account.apiKey, ws.kbId, res.body.data.id)).status).toBe("ready");
      const chunks = await allChunks(server, ws, res.body.data.id);
      expect([file.name, chunks.map((chunk) => chunk.text)]).toEqual([file.name, [`Helpers\n\nA function.\n\n${code}`]]);
    }
  });
});

describe("Markdown code fences", () => {
  test("a fence closes only on a line of its marker alone; one opened in a block quote reads without the quote's markers and ends with it", async () => {
    const md = [
      ...["> Run:", "> ```sh", "> npm i", "> > not a marker", "> ```", ""],
      ...["> > ```", "> > inner", "> outer only", ""],
      ...["## Install", "", "```", "```js", "code", "```", "", "# Next", "", "Steps."],
    ].join("\n");
    const res = await upload(server, ws, new File([md], "fences.md"));
    expect((await waitForDocument(server, ws.account.apiKey, ws.kbId, res.body.data.id)).status).toBe("ready");
    const chunks = await allChunks(server, ws, res.body.data.id);
    expect(chunks.map((chunk) => [chunk.section_heading, chunk.text])).toEqual([
      ["", "Run:\n\nnpm i\n> not a marker\n\ninner\n\nouter only"],
      ["Install", "Install\n\n```js\ncode"],
      ["Next", "Next\n\nSteps."],
    ]);
  });
});

describe("Markdown's escapes and entities", () => {
  test("entity references are decoded, backslash-escaped punctuation is literal (also a pipe in a table cell), code spans are kept as written", async () => {
    const md = [
      "# Fish &amp; Chips",
      "",
      "Salt &amp; vinegar at the caf&eacute;, 5 &lt; 6, AT&T and &#233;t&#xE9;.",
      "",
      "Use snake\\_case\\_names and \\*literal stars\\* here.",
      "",
      "Code `a\\*b &amp; c` stays as written.",
      "",
      "| fruit | note |",
      "|---|---|",
      "| Pear | a \\| pipe |",
      "| Code | `x\\|y` |",
      "| Link | <https://x.y/a\\|b> |",
      "",
      // Autolinks of any scheme and email addresses keep their address as written (they were stripped as HTML tags).
      "Write <ada@example.com> or <mailto:help@example.com>; files at <ftp://files.example.com/x>; <_a&b_@example.com>.",
      "",
      // Three backticks with another one later on the line open a code span, not a code fence.
      "```npm i``` runs it.",
      "",
      // A backtick inside a tag is the tag's; an escaped backslash does not escape the backtick after it.
      "<img alt=\"the ` key\"> Press `cmd`, then C:\\\\`dir`.",
      "",
      // A code span is closed by a run of as many backticks; its text keeps escapes, entities and emphasis marks.
      "Spans ``a ` &amp; b`` and `\\*p\\* **q**`; autolinks keep theirs: <https://example.com/?a=1&amp;b=\\*>.",
      "",
      // The text's own private-use characters (an icon font's) are kept as they are, not taken for set-aside ones.
      "Play \ue037 pause \ue07c stop \ue000 and &#xE02A; and &#99999999; and &#128;.",
      "",
      // A setext heading is read once, like an ATX one.
      "Tom &amp;amp; Jerry &lt;b&gt; \\*x\\*",
      "===",
      "",
      "Cartoon.",
    ].join("\n");
    const res = await upload(server, ws, new File([md], "escapes.md"));
    expect(res.status).toBe(202);
    expect((await waitForDocument(server, ws.account.apiKey, ws.kbId, res.body.data.id)).status).toBe("ready");
    const chunks = await allChunks(server, ws, res.body.data.id);
    expect(chunks.map((chunk) => [chunk.section_heading, chunk.text])).toEqual([
      [
        "Fish & Chips",
        "Fish & Chips\n\nSalt & vinegar at the café, 5 < 6, AT&T and été.\n\nUse snake_case_names and *literal stars* here.\n\n" +
          "Code a\\*b &amp; c stays as written.\n\nfruit | note\nPear | a | pipe\nCode | x|y\nLink | https://x.y/a|b\n\n" +
          "Write ada@example.com or mailto:help@example.com; files at ftp://files.example.com/x; _a&b_@example.com.\n\nnpm i runs it.\n\nPress cmd, then C:\\dir.\n\n" +
          "Spans a ` &amp; b and \\*p\\* **q**; autolinks keep theirs: https://example.com/?a=1&amp;b=\\*.\n\n" +
          "Play \ue037 pause \ue07c stop \ue000 and \ue02a and &#99999999; and €.",
      ],
      ["Tom &amp; Jerry <b> *x*", "Tom &amp; Jerry <b> *x*\n\nCartoon."],
    ]);
    expect(await keywordHits(server, ws, "café")).toContain(res.body.data.id);
  });
});
