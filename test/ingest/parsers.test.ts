import { afterAll, describe, expect, test } from "bun:test";
import { PDFDocument, StandardFonts } from "pdf-lib";
import * as XLSX from "@e965/xlsx";
import JSZip from "jszip";
import { join } from "node:path";
import {
  ParseError,
  RICH_TYPES,
  SUPPORTED_TYPES,
  TEXT_TYPES,
  parseDocument,
  type ParsedDocument,
} from "../../src/ingest/parsers/index.ts";
import { terminateOcr } from "../../src/ingest/parsers/ocr.ts";
import { chunkDocument } from "../../src/ingest/chunker.ts";
import { ensureFixtures, SHARED_SAMPLES, SHARED_SAMPLES_DIR, type DocumentFixture, type Phrase } from "../fixtures.ts";

const OCR_TIMEOUT_MS = 60_000;
const manifest = await ensureFixtures();

afterAll(terminateOcr);

/** Lower case, words only: OCR and layout may differ from the source in case and spacing. */
function comparable(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}@.:;&_\-\[\]]+/gu, " ").trim();
}

function expectPhrase(doc: ParsedDocument, phrase: Phrase, file: string) {
  const wanted = comparable(phrase.text);
  const holders = doc.sections.filter((section) => comparable(section.text).includes(wanted));
  expect(holders.length, `"${phrase.text}" not found in ${file}`).toBeGreaterThan(0);
  expect(holders.map((section) => section.page), `page of "${phrase.text}" in ${file}`).toContain(phrase.page);
  if (phrase.heading !== undefined) {
    expect(holders.map((section) => section.heading), `heading of "${phrase.text}" in ${file}`).toContain(phrase.heading);
  }
}

async function parseFixture(dir: string, fixture: DocumentFixture) {
  const data = new Uint8Array(await Bun.file(join(dir, fixture.file)).arrayBuffer());
  return parseDocument(fixture.type, data, fixture.file);
}

function expectWellFormed(doc: ParsedDocument, type: string) {
  const rich = (RICH_TYPES as readonly string[]).includes(type);
  for (const section of doc.sections) {
    if (rich) {
      expect(section.page).toBeGreaterThanOrEqual(1);
      expect(section.page).toBeLessThanOrEqual(doc.pageCount!);
    } else expect(section.page).toBeNull();
    expect(section.text).toBe(section.text.trim());
    // What a font without a Unicode map gives (its glyph codes) never reaches the text.
    expect(section.text).not.toMatch(/[\u0000-\u0008\u000e-\u001f]/);
    expect(section.text === "" && section.heading === "").toBe(false);
  }
  if (!rich) expect(doc.pageCount).toBeNull();
}

describe("generated fixtures", () => {
  test("cover all 16 supported extensions", () => {
    expect(new Set(manifest.documents.map((fixture) => fixture.type))).toEqual(new Set(SUPPORTED_TYPES));
  });

  for (const fixture of manifest.documents) {
    test(`${fixture.file}: ${fixture.pageCount ?? "no"} pages, known phrases in place`, async () => {
      const doc = await parseFixture(manifest.dir, fixture);
      expect(doc.pageCount).toBe(fixture.pageCount);
      expectWellFormed(doc, fixture.type);
      for (const phrase of fixture.phrases) expectPhrase(doc, phrase, fixture.file);
      const allText = comparable(doc.sections.map((section) => `${section.heading} ${section.text}`).join(" "));
      for (const boilerplate of fixture.absent ?? []) expect(allText).not.toContain(comparable(boilerplate));
    }, fixture.ocr ? OCR_TIMEOUT_MS : 10_000);
  }

  test("slides and sheets carry their metadata", async () => {
    const deck = await parseFixture(manifest.dir, manifest.documents.find((fixture) => fixture.type === "pptx")!);
    expect(deck.sections.map((section) => section.meta)).toEqual([{ slide: 1 }, { slide: 2 }, { slide: 3 }]);
    const book = await parseFixture(manifest.dir, manifest.documents.find((fixture) => fixture.type === "xlsx")!);
    expect(book.sections.map((section) => section.meta)).toEqual([{ sheet: "Revenue" }, { sheet: "Expenses" }]);
  });
});

describe("rejected files", () => {
  for (const fixture of manifest.rejected) {
    test(`${fixture.file}: "${fixture.error}"`, async () => {
      const data = new Uint8Array(await Bun.file(join(manifest.dir, fixture.file)).arrayBuffer());
      const error = await parseDocument(fixture.type, data, fixture.file).then(() => null, (caught: unknown) => caught);
      expect(error).toBeInstanceOf(ParseError);
      expect((error as ParseError).message.startsWith(fixture.error)).toBe(true);
    });
  }

  test("unsupported extension", async () => {
    await expect(parseDocument("exe", new Uint8Array(4), "setup.exe")).rejects.toThrow(new ParseError("Unsupported file type: exe"));
  });

  test("a TIFF whose frame chain loops back on itself fails instead of hanging", async () => {
    const bytes = new Uint8Array(64);
    const view = new DataView(bytes.buffer);
    bytes.set([0x49, 0x49, 0x2a, 0x00]);
    view.setUint32(4, 8, true); // first frame at 8
    view.setUint16(8, 0, true); // no entries
    view.setUint32(10, 8, true); // next frame: itself
    await expect(parseDocument("tiff", bytes, "loop.tiff")).rejects.toThrow(new ParseError("Not a valid TIFF image"));
  });

  test("an image too large to OCR is refused from its header, before decoding", async () => {
    const ihdr = [0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0x75, 0x30, 0, 0, 0x75, 0x30, 8, 2, 0, 0, 0, 0, 0, 0, 0];
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...ihdr]);
    await expect(parseDocument("png", png, "huge.png")).rejects.toThrow(
      new ParseError("Image is too large to read (30000×30000 pixels; the limit is 50 megapixels)"),
    );
  });

  // Whatever the bytes, a parser resolves or throws a ParseError (never another error, never hangs).
  for (const type of SUPPORTED_TYPES) {
    test(`garbage as .${type} gives a document or a ParseError`, async () => {
      const inputs = [new Uint8Array(0), new Uint8Array(1), Uint8Array.from({ length: 3000 }, (_, i) => (i * 7919) % 251)];
      for (const data of inputs) {
        const outcome = await parseDocument(type, data, `garbage.${type}`).then(
          (doc) => doc,
          (error: unknown) => error,
        );
        if (outcome instanceof Error) expect(outcome).toBeInstanceOf(ParseError);
      }
    });
  }
});

describe("shared real-world samples", () => {
  for (const sample of SHARED_SAMPLES) {
    test(`${sample.file}`, async () => {
      const doc = await parseFixture(SHARED_SAMPLES_DIR, sample);
      expect(doc.pageCount).toBe(sample.pageCount);
      expectWellFormed(doc, sample.type);
      for (const phrase of sample.phrases) expectPhrase(doc, phrase, sample.file);
    }, OCR_TIMEOUT_MS); // every sample: react_paper.pdf reads its figures' unmapped fonts by OCR (~9 s here)
  }
});

describe("pdf running headers and footers", () => {
  test("a line at the top or bottom of most pages (numbers aside) is left out; the body text and a one-off line there stay", async () => {
    const pdf = await PDFDocument.create({ updateMetadata: false });
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    for (let n = 1; n <= 4; n++) {
      const page = pdf.addPage([612, 792]);
      page.drawText("ACME CONFIDENTIAL", { x: 72, y: 760, size: 9, font });
      page.drawText(`Body of page ${n} names the orchard${"abcd"[n - 1]} variety.`, { x: 72, y: 700, size: 11, font });
      page.drawText(n === 2 ? "Signed by the grower on page two." : `Quarterly report 2026, page ${n} of 4`, { x: 72, y: 40, size: 9, font });
    }
    const doc = await parseDocument("pdf", await pdf.save(), "report.pdf");
    const text = doc.sections.map((section) => section.text).join("\n");
    expect(text).not.toContain("ACME");
    expect(text).not.toContain("Quarterly report");
    for (const name of ["orcharda", "orchardb", "orchardc", "orchardd"]) expect(text).toContain(name);
    expect(text).toContain("Signed by the grower on page two.");
  });
  test("pages whose only lines repeat are kept whole: those lines are the content", async () => {
    const pdf = await PDFDocument.create({ updateMetadata: false });
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    for (let n = 1; n <= 4; n++) pdf.addPage([612, 792]).drawText(`Item ${n} costs ${n * 3} dollars`, { x: 72, y: 700, size: 11, font });
    const doc = await parseDocument("pdf", await pdf.save(), "prices.pdf");
    expect(doc.sections.map((section) => section.text).join("\n")).toBe(
      ["Item 1 costs 3 dollars", "Item 2 costs 6 dollars", "Item 3 costs 9 dollars", "Item 4 costs 12 dollars"].join("\n"),
    );
  });
});

describe("pdf lines ending in a hyphen", () => {
  test("a word broken in two is joined; a compound keeps its hyphen", async () => {
    const pdf = await PDFDocument.create({ updateMetadata: false });
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    const page = pdf.addPage([612, 792]);
    const lines = ["Growers prefer a prompt-based schedule over a fixed one.", "", "The schedule is prompt-", "based, an exam-", "ple of chain-of-", "thought planning with PaLM-", "540B in the loop."];
    lines.forEach((line, i) => page.drawText(line, { x: 72, y: 700 - i * 14, size: 11, font }));
    const doc = await parseDocument("pdf", await pdf.save(), "hyphens.pdf");
    expect(doc.sections.map((section) => section.text).join("\n")).toContain(
      "The schedule is prompt-based, an example of chain-of-thought planning with PaLM-540B in the loop.",
    );
  });
});

describe("pdf paragraphs running over a page break", () => {
  test("a page ending mid-sentence and the next going on in lower case make one paragraph, cited on both pages; not after a footnote, a caption or a number", async () => {
    const pdf = await PDFDocument.create({ updateMetadata: false });
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    const body = (text: string, i = 0) => ({ text, size: 11, y: 700 - i * 14 });
    const pages = [
      [body("Reasoning traces are dense in some tasks, but thoughts only need to")],
      [body("appear sparsely in the most relevant positions of a trajectory."), body("", 1), body("The agent decides when to think. It is not", 2)],
      [body("Prompted to do so at every step."), body("", 1), body("Each page ends here.", 2)],
      [body("then a lower-case line after a full stop starts its own paragraph."), body("", 1), body("A footnote ends this page, and", 2), { text: "1 Code is at the project site", size: 8, y: 60 }],
      [body("after a footnote the page goes on apart."), body("", 1), body("Figure 3: Success rate per step", 2)],
      [body("under a caption too. The scores were 12 and", 0), body("", 1), body("Model baseline 12 ours 15", 2)],
      [body("below a table as well."), body("", 1), body("Figure 3.2 shows the accuracy of the model and", 2)],
      [body("the loss, which a caption would not say."), body("", 1), body("Fig. 4 Schematic overview of the pipeline and", 2)],
      [body("its stages, under a caption without a colon.")],
    ];
    for (const lines of pages) {
      const page = pdf.addPage([612, 792]);
      for (const { text, size, y } of lines) if (text) page.drawText(text, { x: 72, y, size, font });
    }
    const doc = await parseDocument("pdf", await pdf.save(), "traces.pdf");
    expect(doc.sections.map((section) => [section.page, section.continuesParagraph ?? false])).toEqual([[1, false], [2, true], [3, false], [4, false], [5, false], [6, false], [7, false], [8, true], [9, false]]);
    const words = (text: string) => text.split(/\s+/).length;
    const [chunk, ...rest] = chunkDocument({ ...doc, sections: doc.sections.slice(0, 4) }, words);
    expect(rest).toEqual([]);
    expect(chunk!.text).toBe(
      "Reasoning traces are dense in some tasks, but thoughts only need to appear sparsely in the most relevant positions of a trajectory.\n\n" +
        "The agent decides when to think. It is not\n\nPrompted to do so at every step.\n\nEach page ends here.\n\n" +
        "then a lower-case line after a full stop starts its own paragraph.\n\nA footnote ends this page, and\n\n1 Code is at the project site",
    );
    expect([chunk!.startPage, chunk!.endPage]).toEqual([1, 4]);
  });
});

describe("xlsx tables side by side", () => {
  test("tables parted by an empty column take their own header rows; a spacer column between labels and figures keeps rows whole", async () => {
    const book = XLSX.utils.book_new();
    const sheet = (rows: unknown[][], name: string) => XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet(rows), name);
    sheet(
      [
        ["Crop", "Acres", null, null, null],
        ["Wheat", 120, null, "Region", "Rain"],
        [null, null, null, "North", 640],
      ],
      "Farms",
    );
    sheet(
      [
        ["Month", null, "Sales"],
        ["May", null, 42],
      ],
      "Spacer",
    );
    const doc = await parseDocument("xlsx", new Uint8Array(XLSX.write(book, { type: "array", bookType: "xlsx" })), "book.xlsx");
    expect(doc.sections.map((section) => section.text)).toEqual(["Crop: Wheat; Acres: 120\nRegion: North; Rain: 640", "Month: May; Sales: 42"]);
  });
});

describe("xlsx declared range", () => {
  test("a sheet declaring A1:XFD1048576 (17 billion cells) is read from the cells it holds (a hang guard: it ran for the 45-minute limit)", async () => {
    const book = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([["Crop", "Acres"], ["Wheat", 120]]), "Huge");
    // Written small, then given the huge range and a far cell in its XML (SheetJS would walk the range to write it).
    const zip = await JSZip.loadAsync(XLSX.write(book, { type: "array", bookType: "xlsx" }));
    const part = "xl/worksheets/sheet1.xml";
    const xml = (await zip.file(part)!.async("string"))
      .replace(/<dimension ref="[^"]*"\/>/, '<dimension ref="A1:XFD1048576"/>')
      .replace("</sheetData>", '<row r="1048576"><c r="XFD1048576" t="inlineStr"><is><t>far corner</t></is></c></row></sheetData>');
    zip.file(part, xml);
    const doc = await parseDocument("xlsx", await zip.generateAsync({ type: "uint8array" }), "huge.xlsx");
    expect(doc.sections.map((section) => section.text)).toEqual(["Crop: Wheat; Acres: 120\nfar corner"]);
  }, 20_000);
});

describe("pdf numbered subsection headings", () => {
  test("a one-line block numbered like 2.1 or B.2.1, then a capital, followed by a paragraph, is a heading at the body's size; numbered lines in a row and lowercase ones are not", async () => {
    const pdf = await PDFDocument.create({ updateMetadata: false });
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    const big = await pdf.embedFont(StandardFonts.HelveticaBold);
    const page = pdf.addPage([612, 792]);
    let y = 740;
    const line = (text: string, gap: number, size = 11, f = font) => {
      y -= gap;
      page.drawText(text, { x: 72, y, size, font: f });
    };
    line("2 Irrigation", 0, 16, big);
    line("Water the young trees twice a week in their first summer.", 40);
    line("2.1 Drip lines", 40);
    line("Drip lines put the water at the roots and waste little of it.", 30);
    line("2.2 Sprinklers", 40);
    line("2.3 Flood", 40);
    line("Sprinklers and flooding are covered in the annex.", 30);
    line("1.5 million hectares are irrigated this way.", 40);
    line("Most of them lie in the south.", 30);
    const doc = await parseDocument("pdf", await pdf.save(), "orchard.pdf");
    expect(doc.sections.map((section) => [section.heading, section.text])).toEqual([
      ["2 Irrigation", "Water the young trees twice a week in their first summer."],
      ["2.1 Drip lines", "Drip lines put the water at the roots and waste little of it.\n\n2.2 Sprinklers"],
      ["2.3 Flood", "Sprinklers and flooding are covered in the annex.\n\n1.5 million hectares are irrigated this way.\n\nMost of them lie in the south."],
    ]);
  });
});

/** A Cyrillic letter's byte in windows-1251 (А-я are 0xC0-0xFF in order). */
function windows1251(letter: string): number {
  return 0xc0 + letter.charCodeAt(0) - "А".charCodeAt(0);
}

describe("text formats", () => {
  const parseText = (type: string, text: string | Uint8Array) =>
    parseDocument(type, typeof text === "string" ? new TextEncoder().encode(text) : text, `sample.${type}`);

  test("type lists", () => {
    expect(SUPPORTED_TYPES).toHaveLength(16);
    expect([...RICH_TYPES, ...TEXT_TYPES].sort()).toEqual([...SUPPORTED_TYPES].sort());
  });

  test("extension is case-insensitive and may have a dot", async () => {
    expect((await parseText(".TXT", "hello")).sections[0]!.text).toBe("hello");
  });

  test("UTF-8 BOM stripped; text that is not UTF-8 read as latin1", async () => {
    expect((await parseText("txt", new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0x69]))).sections[0]!.text).toBe("hi");
    expect((await parseText("txt", new Uint8Array([0x63, 0x61, 0x66, 0xe9]))).sections[0]!.text).toBe("café");
    // UTF-8 but for one stray byte: the rest stays UTF-8, the stray byte becomes U+FFFD
    const mostly = new Uint8Array([...new TextEncoder().encode("café crème brûlée "), 0xe9, ...new TextEncoder().encode(" déjà vu")]);
    expect((await parseText("txt", mostly)).sections[0]!.text).toBe("café crème brûlée \uFFFD déjà vu");
  });

  test("binary data under a text extension (a NUL byte in its first 8,000) fails with a clear message", async () => {
    const binary = new Uint8Array(4096).map((_, i) => (i * 7919) % 256);
    for (const type of ["txt", "md", "csv", "json", "html"]) {
      await expect(parseText(type, binary)).rejects.toThrow("This file holds binary data, not text");
    }
  });

  test("markdown: setext headings, front matter dropped but for its title, code kept", async () => {
    const doc = await parseText("md", "---\ntitle: x\ndate: 2024-01-01\n---\nIntro line\none\n\nSetext Title\n============\n\n```js\nconst x = 1;\n```\n");
    expect(doc.sections).toEqual([
      { text: "Intro line one", page: null, heading: "x" },
      { text: "const x = 1;", page: null, heading: "Setext Title" },
    ]);
    // TOML front matter, as Hugo writes it, likewise
    const toml = await parseText("md", '+++\ntitle = "Release notes"\ndraft = false\n+++\n\nFixed a crash.\n');
    expect(toml.sections).toEqual([{ text: "Fixed a crash.", page: null, heading: "Release notes" }]);
    // the top-level title only, a folded one read as one line
    const nested = await parseText("md", "---\ntitle: Real Page Title\nseo:\n  title: SEO override\n---\nBody.\n");
    expect(nested.sections).toEqual([{ text: "Body.", page: null, heading: "Real Page Title" }]);
    const folded = await parseText("md", "---\ntitle: >-\n  A long title\n  over two lines\ndate: 2024-01-01\n---\nBody.\n");
    expect(folded.sections).toEqual([{ text: "Body.", page: null, heading: "A long title over two lines" }]);
  });

  test("markdown: HTML comments are not text, inline, alone on a line or over several lines; code keeps them", async () => {
    const md = "# Top\n\nBefore.\n\n<!-- ## Commented Heading -->\n\nAfter <!-- a note --> it.\n\n<!--\nseveral\nlines\n-->\n\n```html\n<!-- in code -->\n```\n\nLast.";
    const doc = await parseText("md", md);
    expect(doc.sections).toEqual([{ text: "Before.\n\nAfter it.\n\n<!-- in code -->\n\nLast.", page: null, heading: "Top" }]);
  });

  test("csv: the delimiter is read off the rows (commas, semicolons as European spreadsheets write, tabs); tsv is always tabs", async () => {
    const rows = async (type: string, text: string) => (await parseText(type, text)).sections.map((section) => section.text);
    expect(await rows("csv", "Name;Price\nApple;1,50\nPear;2,75\n")).toEqual(["Name: Apple; Price: 1,50\nName: Pear; Price: 2,75"]);
    expect(await rows("csv", 'Name,Note\nAnna,"likes a; b; c"\nBen,"x; y"\n')).toEqual(["Name: Anna; Note: likes a; b; c\nName: Ben; Note: x; y"]);
    expect(await rows("csv", "Name\tCity\nAnna\tZurich\n")).toEqual(["Name: Anna; City: Zurich"]);
    expect(await rows("tsv", "Name;City\tScore\nAnna;Zurich\t5\n")).toEqual(["Name;City: Anna;Zurich; Score: 5"]);
  });

  test("html: page furniture marked by class or id, and hidden elements, are not text; the body and main content always are", async () => {
    const html = `<html><body class="layout has-sidebar">
      <div class="breadcrumb">Home &gt; Docs</div>
      <div id="sidebar">Sidebar links</div>
      <div class="main-content with-sidebar"><h1>Guide</h1><p>The real article text.</p>
        <p style="color: red; display:none">Hidden note</p><span style="visibility: hidden">Invisible</span></div>
      <div id="footer" class="site-footer">Copyright 2026</div>
      <div class="cookie-banner">We use cookies</div>
      <div class="share-buttons">Tweet Share</div>
      <p class="footerless">A class that only starts like one.</p>
      <p class="cookie-recipe">Cream the butter for the cookies.</p>
      <div class="social-studies">Civics for year nine.</div>
      <div id="consent-modal">Accept all</div>
    </body></html>`;
    const doc = await parseText("html", html);
    expect(doc.sections).toEqual([
      {
        text: "The real article text.\n\nA class that only starts like one.\n\nCream the butter for the cookies.\n\nCivics for year nine.",
        page: null,
        heading: "Guide",
      },
    ]);
  });

  test("html: entities decoded, table rows as lines, title kept as heading", async () => {
    const doc = await parseText("html", "<title>T &amp; C</title><table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>");
    expect(doc.sections).toEqual([{ text: "a | b\n1 | 2", page: null, heading: "T & C" }]);
  });

  test("html: paragraphs, lists and line breaks inside a cell stay on the row's line", async () => {
    const cells = "<tr><td><p>Sahara</p><p>North Africa</p></td><td><ul><li>9200000</li></ul></td><td>hot<br>dry</td></tr>";
    const doc = await parseText("html", `<table><tr><th><p>Desert</p></th><th><div>Area</div></th><th>Climate</th></tr>${cells}</table><p>After</p>`);
    expect(doc.sections.map((section) => section.text)).toEqual(["Desert | Area | Climate\nSahara North Africa | 9200000 | hot dry\n\nAfter"]);
  });

  test("json: top-level array paths", async () => {
    const doc = await parseText("json", '[{"name": "x", "tags": ["a", "b"]}]');
    expect(doc.sections[0]!.text).toBe("[0].name: x\n[0].tags: a, b");
  });

  test("json: an array of plain values is one line, its path written once", async () => {
    const key = "k".repeat(1000);
    const doc = await parseText("json", JSON.stringify({ [key]: Array(11_500).fill(1), mixed: [1, null, "", "two", { deep: true }] }));
    expect(doc.sections.map((section) => section.text)).toEqual([
      `${key}: ${Array(11_500).fill(1).join(", ")}\n\nmixed[0]: 1\nmixed[3]: two\nmixed[4].deep: true`,
    ]);
  });

  test("json error carries a short reason", async () => {
    await expect(parseText("json", "{")).rejects.toThrow(/^Not valid JSON: .+/);
    // binary data is said to be so, once, not as invalid JSON
    await expect(parseText("json", new Uint8Array([1, 0, 2, 0, 0, 3]))).rejects.toThrow(/^This file holds binary data/);
  });

  test("json: numbers as written, beyond a double's precision too", async () => {
    const doc = await parseText("json", '{"tweet_id": 1234567890123456789, "price": 1.50, "big": 1e400}');
    expect(doc.sections[0]!.text).toBe("tweet_id: 1234567890123456789\n\nprice: 1.50\n\nbig: 1e400");
  });

  test("html: a page's <header> is furniture, an article's or section's own header (its title) is text", async () => {
    const html = `<body><header><a>Site name</a> Menu</header><main><article><header><h1>Quantum Gardening Tips</h1><p>By Ada</p></header>
      <p>Water daily.</p></article><section><header>Section intro</header><p>More.</p></section></main></body>`;
    expect((await parseText("html", html)).sections).toEqual([{ text: "By Ada\n\nWater daily.\n\nSection intro\n\nMore.", page: null, heading: "Quantum Gardening Tips" }]);
    // Its headings too: mostly the site's name and a menu's, which must not replace the page's title
    const banner = `<title>How to bake bread</title><header><div class="brand"><h1>ACME Blog</h1></div><h2>Menu</h2></header><main><p>Knead the dough for ten minutes.</p></main>`;
    expect((await parseText("html", banner)).sections).toEqual([{ text: "Knead the dough for ten minutes.", page: null, heading: "How to bake bread" }]);
  });

  test("a Markdown ordered list's items keep their numbers as written (step 2 is the reader's); bullets do not", async () => {
    const md = "# Steps\n\n1. Preheat the oven.\n2. Mix the flour.\n3) Bake it.\n\n- a bullet\n- another\n";
    expect((await parseText("md", md)).sections).toEqual([{ text: "1. Preheat the oven.\n2. Mix the flour.\n3) Bake it.\n\na bullet\nanother", page: null, heading: "Steps" }]);
  });

  test("html: form controls' text stays apart from its neighbours", async () => {
    const doc = await parseText("html", "<form><label>Name</label><input><textarea>Comments</textarea></form>");
    expect(doc.sections[0]!.text).toBe("Name Comments");
  });

  test("html: a page that is not UTF-8 is read in the encoding its <meta> declares", async () => {
    const encode = (text: string, table: Record<string, number>) => new Uint8Array([...text].map((c) => table[c] ?? c.charCodeAt(0)));
    const cp1251: Record<string, number> = Object.fromEntries([..."МоскваПриветмир"].map((c) => [c, windows1251(c)]));
    const page = encode('<html><head><meta charset="windows-1251"></head><body><h1>Москва</h1><p>Привет мир</p></body></html>', cp1251);
    expect((await parseText("html", page)).sections).toEqual([{ text: "Привет мир", page: null, heading: "Москва" }]);
    const httpEquiv = encode('<meta http-equiv="Content-Type" content="text/html; charset=windows-1251"><p>Москва</p>', cp1251);
    expect((await parseText("html", httpEquiv)).sections[0]!.text).toBe("Москва");
    // an unknown label, and no declaration, leave the latin1 reading
    expect((await parseText("html", new Uint8Array([...new TextEncoder().encode('<meta charset="x-nope"><p>caf'), 0xe9, ...new TextEncoder().encode("</p>")]))).sections[0]!.text).toBe("café");
  });

  test("UTF-16 without a BOM is told by its NUL bytes, either byte order", async () => {
    const le = new Uint8Array([..."Hello world"].flatMap((c) => [c.charCodeAt(0), 0]));
    const be = new Uint8Array([..."Hello world"].flatMap((c) => [0, c.charCodeAt(0)]));
    expect((await parseText("txt", le)).sections[0]!.text).toBe("Hello world");
    expect((await parseText("csv", be)).sections[0]!.text).toBe("Hello world");
  });

  test("markdown: a link reference definition is not text, a line merely shaped like one is, and so is a footnote", async () => {
    const md = [
      "# Notes",
      "See the altimeter note[^1] and [the manual][man].",
      "[^1]: Altimeter drift is about ten metres per hour.",
      "[Warning]: Never descend below the cloud base.",
      "[1.2.0]: fixed the flap sensor",
      "[man]: https://example.com/manual \"The manual\"",
      "   [docs]: <https://example.com/a b> 'Docs'",
      "[ref]: /relative/path",
      '[spec]: https://spec.commonmark.org "The \\"CommonMark\\" spec"',
      "[v]: https://example.com/v (see \\(v0.31\\))",
    ].join("\n\n");
    expect((await parseText("md", md)).sections.map((section) => section.text)).toEqual([
      [
        "See the altimeter note[^1] and the manual.",
        "[^1]: Altimeter drift is about ten metres per hour.",
        "[Warning]: Never descend below the cloud base.",
        "[1.2.0]: fixed the flap sensor",
      ].join("\n\n"),
    ]);
  });

  test("markdown: raw <script> and <style> blocks are not text", async () => {
    const md = "# Page\n\n<script>\nwindow.secret = 1;\n</script>\n\n<STYLE type=\"text/css\">\n.marker { color: red; }\n</STYLE>\n\n<script src=\"x.js\"></script>\nText.\n";
    expect((await parseText("md", md)).sections).toEqual([{ text: "Text.", page: null, heading: "Page" }]);
    // Unclosed, a tag that opens a line is prose; words after a closing tag on its line are kept.
    const prose = "# HTML tutorial\n\n<style> elements hold CSS.\n\n## Next section\n\nMore on cassowaries.\n\n<script src=\"w.js\"></script> Emus run.\n";
    expect((await parseText("md", prose)).sections.map((section) => [section.heading, section.text])).toEqual([
      ["HTML tutorial", "elements hold CSS."], // inline tags are stripped, as everywhere
      ["Next section", "More on cassowaries.\n\nEmus run."],
    ]);
    // The opening tag alone on its line, with attributes or over two lines, opens a block.
    const analytics = "# Page\n\nIntro.\n\n<script async>\nwindow.dataLayer = [];\nfunction gtag(){}\n</script>\n\n<script\n  src=\"x.js\">\n</script>\n\n## Usage\n\nBody.\n";
    expect((await parseText("md", analytics)).sections.map((section) => [section.heading, section.text])).toEqual([
      ["Page", "Intro."],
      ["Usage", "Body."],
    ]);
    // A line with more than the tag on it is text, its tags dropped: a tutorial's prose, an indented example.
    const tutorialProse = "# Styling\n\n<style> holds CSS rules. A minimal one:\n\n    <style>\n      body { margin: 0; }\n    </style>\n\n<script> and </script> wrap code.\n\nPut it in the head.\n";
    expect((await parseText("md", tutorialProse)).sections[0]!.text).toContain("holds CSS rules. A minimal one:");
    expect((await parseText("md", tutorialProse)).sections[0]!.text).toContain("and wrap code.");
    // Nor is a tag alone that no closing tag follows before the next heading or code fence (one in inline
    // code is an example).
    const inline = "# Scripts\n\n<script> elements run JavaScript.\n\n## Placement\n\nAt the end, about giraffes.\n\n## Closing\n\nClose it with `</script>`.\n";
    expect((await parseText("md", inline)).sections.map((section) => section.heading)).toEqual(["Scripts", "Placement", "Closing"]);
    // A line of whole elements is not text either, however short; in a block quote too.
    const oneLiners = '# Page\n\nKites fly.\n\n<script>console.log("leak")</script>\n<style>.x{color:red}</style>\n<SCRIPT async>a()</script> <script>b()</script>\n> <style>.q{}</style>\n\nEnd.\n';
    expect((await parseText("md", oneLiners)).sections.map((section) => section.text)).toEqual(["Kites fly.\n\nEnd."]);
    // A tag first mentioned in prose, then shown closed in a code fence, is prose: the fence is not swallowed.
    const tutorial = "<script> elements run JavaScript.\n\n## Example\n\n```html\n<script>alert(1)</script>\n```\n\nDone.\n";
    expect((await parseText("md", tutorial)).sections.map((section) => [section.heading, section.text])).toEqual([
      ["", "elements run JavaScript."],
      ["Example", "<script>alert(1)</script>\n\nDone."],
    ]);
  });

  test("csv and tsv: a quote that opens no quoted field is text", async () => {
    const rows = async (type: string, text: string) => (await parseText(type, text)).sections.map((section) => section.text);
    expect(await rows("tsv", 'id\ttitle\tyear\n1\t"Heat" (film)\t1995\n2\tCasablanca\t1942\n')).toEqual([
      'id: 1; title: "Heat" (film); year: 1995\nid: 2; title: Casablanca; year: 1942',
    ]);
    // quoted fields as spreadsheets write them still are fields
    expect(await rows("tsv", 'a\tb\n"x\ty"\t"say ""hi"""\n')).toEqual(['a: x y; b: say "hi"']);
    // a title line above the header (bank statements) keeps the rows' columns apart
    expect(await rows("csv", 'Account: 12345678\nDate,Description,Amount\n01/02/2023,"Coffee, large",-3.50\n')).toEqual([
      "Account: 12345678: Date; Column 2: Description; Column 3: Amount\nAccount: 12345678: 01/02/2023; Column 2: Coffee, large; Column 3: -3.50",
    ]);
    // one stray quote in a file whose other fields are quoted properly keeps them read as quoted fields
    expect(await rows("csv", 'id,comment\n1,"Line one\nline two, with comma"\n2,"He said ""yes"", then left"\n3,"5\' 10"" tall" extra\n')).toEqual([
      'id: 1; comment: Line one line two, with comma\nid: 2; comment: He said "yes", then left\nid: 3; comment: 5\' 10"" tall" extra',
    ]);
    // Google Sheets writes quotes as they are: a stray one closed by another rows later no longer fuses those rows
    expect(await rows("tsv", 'title\tyear\n"Heat" (film)\t1995\nAlien\t1979\nSay "hi"\t2000\nUp\t2009\n')).toEqual([
      'title: "Heat" (film); year: 1995\ntitle: Alien; year: 1979\ntitle: Say "hi"; year: 2000\ntitle: Up; year: 2009',
    ]);
    // nor does a stray quote closed further on, in an export whose last column is written over two lines
    const films = 'id,title,description\r\n1,Alien,"A crew finds a ship.\r\nThe creature hunts them."\r\n3,"Heat" (1995),"A heist.\r\nA detective."\r\n4,Fargo,"A car salesman.\r\nSnow."\r\n';
    const filmRows = (await rows("csv", films))[0]!.split("\n");
    expect([filmRows[0], filmRows[2]]).toEqual(["id: 1; title: Alien; description: A crew finds a ship. The creature hunts them.", "id: 4; title: Fargo; description: A car salesman. Snow."]);
  });
});
