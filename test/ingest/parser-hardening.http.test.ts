// Hostile documents over HTTP (issue 9): zip bombs fail their own document with a clear message
// while the server stays small and keeps working; pathological Markdown lines ingest (they took
// time quadratic in the line length); a .docx is billed the pages its content fills, whatever its
// docProps say; a spreadsheet with __proto__ names cannot pollute Object.prototype.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { constants, deflateRawSync } from "node:zlib";
import JSZip from "jszip";
import PptxGenJS from "pptxgenjs";
import * as XLSX from "@e965/xlsx";
import { Document, FootnoteReferenceRun, Packer, Paragraph, TextRun } from "docx";
import { parseDocument } from "../../src/ingest/parsers/index.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { SHARED_SAMPLES_DIR } from "../fixtures.ts";
import { allChunks, ingest, upload, workspace, type Workspace } from "./ingest-helpers.ts";

const MB = 1024 * 1024;
let server: TestServer;
let ws: Workspace;

beforeAll(async () => {
  server = await startTestServer({ env: { QUARRY_LIMITS: "off" } });
  ws = await workspace(server);
});
afterAll(() => server.stop());

/**
 * Raw deflate data for `megabytes` MB of spaces, about 1 KB per MB: one 16 MB block compressed
 * with a full flush (so copies can follow each other), repeated, then an empty final block.
 */
function deflatedSpaces(megabytes: number): Buffer {
  const block = deflateRawSync(Buffer.alloc(16 * MB, 0x20), { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  return Buffer.concat([...Array<Buffer>(Math.ceil(megabytes / 16)).fill(block), Buffer.from([0x03, 0x00])]);
}

interface RawEntry {
  name: string;
  /** The bytes as stored: deflated for method 8, as is for method 0. */
  data: Buffer;
  method: 0 | 8;
  /** Declared uncompressed size, which may lie. */
  declaredSize: number;
}

/** A little-endian record of `size` bytes with the given [offset, value, width] fields (the rest 0). */
function record(size: number, fields: Array<[number, number, 2 | 4]>): Buffer {
  const buffer = Buffer.alloc(size);
  for (const [at, value, width] of fields) {
    if (width === 2) buffer.writeUInt16LE(value, at);
    else buffer.writeUInt32LE(value, at);
  }
  return buffer;
}

/** A zip written byte by byte, so the headers can declare whatever sizes a bomb's author chooses (CRCs left 0). */
function rawZip(entries: RawEntry[]): Uint8Array<ArrayBuffer> {
  const parts: Buffer[] = [];
  const directory: Buffer[] = [];
  let offset = 0;
  for (const { name, data, method, declaredSize } of entries) {
    const nameBytes = Buffer.from(name);
    const local = record(30, [[0, 0x04034b50, 4], [4, 20, 2], [8, method, 2], [18, data.length, 4], [22, declaredSize, 4], [26, nameBytes.length, 2]]);
    const central = record(46, [
      [0, 0x02014b50, 4], [4, 20, 2], [6, 20, 2], [10, method, 2], [20, data.length, 4], [24, declaredSize, 4], [28, nameBytes.length, 2], [42, offset, 4],
    ]);
    parts.push(local, nameBytes, data);
    directory.push(central, nameBytes);
    offset += local.length + nameBytes.length + data.length;
  }
  const directoryBytes = Buffer.concat(directory);
  const end = record(22, [[0, 0x06054b50, 4], [8, entries.length, 2], [10, entries.length, 2], [12, directoryBytes.length, 4], [16, offset, 4]]);
  return new Uint8Array(Buffer.concat([...parts, directoryBytes, end]));
}

const stored = (name: string, text: string): RawEntry => ({ name, data: Buffer.from(text), method: 0, declaredSize: Buffer.byteLength(text) });
/** A part inflating to `megabytes` MB (a multiple of 16) whose headers declare 1,000 bytes. */
const bomb = (name: string, megabytes: number): RawEntry => ({ name, data: deflatedSpaces(megabytes), method: 8, declaredSize: 1000 });

/** Peak resident memory of this process (the test server runs in it), from /proc. */
function statusBytes(field: "VmHWM" | "VmRSS"): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync("/proc/self/status", "utf8"));
  return Number(match![1]) * 1024;
}

/**
 * The test server runs in this process, beside every other test file run before this one: peak memory
 * is measured from here on, as growth over the current RSS (writing 5 to clear_refs resets the peak).
 */
let rssBefore = 0;
function startMeasuringPeak(): void {
  writeFileSync("/proc/self/clear_refs", "5");
  rssBefore = statusBytes("VmRSS");
}

function peakGrowthBytes(): number {
  return statusBytes("VmHWM") - rssBefore;
}

async function expectFailed(file: File, message: string) {
  const doc = await ingest(server, ws, file);
  expect({ status: doc.status, error: doc.error_detail }).toEqual({ status: "failed", error: message });
  return doc;
}

describe("zip bombs", () => {
  beforeAll(startMeasuringPeak);

  test("a docx whose document.xml inflates to 2 GB (declared 1,000 bytes) fails; memory stays far below that", async () => {
    const file = new File([rawZip([stored("[Content_Types].xml", "<Types/>"), bomb("word/document.xml", 2048)])], "bomb.docx");
    expect(file.size).toBeLessThan(3 * MB);
    await expectFailed(file, "A part of the file (word/document.xml) decompresses to more than 100 MB; it looks like a zip bomb");
    expect(peakGrowthBytes()).toBeLessThan(512 * MB);
  });

  test("a pptx with a 1 GB slide fails the same way", async () => {
    const file = new File([rawZip([stored("ppt/presentation.xml", "<p:presentation/>"), bomb("ppt/slides/slide1.xml", 1024)])], "bomb.pptx");
    await expectFailed(file, "A part of the file (ppt/slides/slide1.xml) decompresses to more than 100 MB; it looks like a zip bomb");
  });

  test("an xlsx of parts under the part limit that add up past the file limit fails", async () => {
    const parts = [1, 2, 3].map((n) => bomb(`xl/worksheets/sheet${n}.xml`, 80));
    await expectFailed(new File([rawZip(parts)], "bomb.xlsx"), "The file decompresses to more than 200 MB; it looks like a zip bomb");
  });

  test("a bomb hidden behind a second part of the same name fails (SheetJS reads every entry)", async () => {
    const workbook = '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheets/></workbook>';
    const file = new File([rawZip([bomb("xl/workbook.xml", 1024), stored("xl/workbook.xml", workbook)])], "twins.xlsx");
    await expectFailed(file, "A part of the file (xl/workbook.xml) decompresses to more than 100 MB; it looks like a zip bomb");
  });

  test("a bomb behind prepended bytes (which jszip skips, moving every offset) is refused as damaged", async () => {
    const zip = rawZip([stored("[Content_Types].xml", "<Types/>"), bomb("word/document.xml", 1024)]);
    const junk = Buffer.alloc(64);
    junk.writeUInt32LE(0x04034b50, 0); // still starts like a zip
    await expectFailed(new File([junk, zip], "shifted.docx"), "Not a valid DOCX file");
  });

  test("a package of more than 10,000 parts fails before they are read", async () => {
    const entries = Array.from({ length: 10_001 }, (_, i) => stored(`ppt/slides/slide${i}.xml`, "<p:sld/>"));
    await expectFailed(new File([rawZip(entries)], "parts.pptx"), "The file has more than 10000 parts; it looks like a zip bomb");
  });

  test("the server keeps working after the bombs", async () => {
    const doc = await ingest(server, ws, new File(["Bees fan their wings to cool the hive."], "after.txt"));
    expect(doc.status).toBe("ready");
    expect(peakGrowthBytes()).toBeLessThan(512 * MB);
  });
});

describe("pathological Markdown lines", () => {
  /** All chunk texts of a ready document, joined. */
  async function ingestedText(file: File): Promise<{ doc: any; text: string }> {
    const doc = await ingest(server, ws, file);
    expect({ status: doc.status, error: doc.error_detail }).toEqual({ status: "ready", error: null });
    const chunks = await allChunks(server, ws, doc.id);
    expect(chunks.length).toBe(doc.chunk_count);
    return { doc, text: chunks.map((chunk) => chunk.text).join(" ") };
  }

  test("an 80,000-character line full of inline syntax and unclosed delimiters", async () => {
    const unit = "Bees *gather* nectar from [clover](https://example.com/clover) and **store** it as `honey` [ while * and ** stay open. ";
    const line = `${unit.repeat(Math.ceil(80_000 / unit.length))}The hive rests at dusk.`;
    expect(line.length).toBeGreaterThanOrEqual(80_000);
    const { doc, text } = await ingestedText(new File([line], "long-line.md"));
    expect(doc.chunk_count).toBeGreaterThan(1);
    expect(text).toContain("Bees gather nectar from clover and store it as honey [ while * and ** stay open.");
    expect(text).toContain("The hive rests at dusk.");
    expect(text).not.toContain("example.com");
    expect(text).not.toContain("*gather*");
  });

  test("a 1 MB line of unclosed brackets and inline tags", async () => {
    const unit = "[<b></b><i></i><em></em><span></span> ";
    const line = `Worker bees build wax combs. ${unit.repeat(Math.ceil(MB / unit.length))}The queen lays the eggs.`;
    const { text } = await ingestedText(new File([line], "brackets.md"));
    expect(text).toContain("Worker bees build wax combs. [ [ [");
    expect(text).toContain("[ [ The queen lays the eggs.");
    expect(text).not.toContain("<b>");
  });
});

describe(".docx read from its content: page count, pages, tables", () => {
  const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
  const paragraph = (text: string, extra = "") => `<w:p>${extra}<w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;
  const pageBreak = '<w:p><w:r><w:br w:type="page"/></w:r></w:p>';

  /** A minimal Word package whose docProps/app.xml claims one page. */
  async function docx(body: string): Promise<File> {
    const zip = new JSZip();
    zip.file("[Content_Types].xml", '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>');
    zip.file("_rels/.rels", '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>' +
      '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties" Target="docProps/app.xml"/></Relationships>');
    zip.file("docProps/app.xml", '<?xml version="1.0"?><Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"><Pages>1</Pages></Properties>');
    zip.file("word/document.xml", `<?xml version="1.0"?><w:document ${W}><w:body>${body}</w:body></w:document>`);
    return new File([new Uint8Array(await zip.generateAsync({ type: "uint8array", compression: "DEFLATE" }))], "claims-one-page.docx");
  }

  /** The package with `body` parsed in process. */
  const parsedDocx = async (body: string) => parseDocument("docx", new Uint8Array(await (await docx(body)).arrayBuffer()), "body.docx");
  const pagesAndTexts = (parsed: { sections: { page: number | null; text: string }[] }) => parsed.sections.map((section) => [section.page, section.text]);

  /** Waits until parsing has set page_count (before the long embedding step), then deletes the document. */
  async function parsedPageCount(file: File): Promise<number> {
    const res = await upload(server, ws, file);
    expect(res.status).toBe(202);
    const path = `${ws.docs}/${res.body.data.id}`;
    for (;;) {
      const doc = (await server.request("GET", path, { token: ws.account.apiKey })).body.data;
      expect(doc.status).not.toBe("failed");
      if (doc.page_count !== null) {
        await server.request("DELETE", path, { token: ws.account.apiKey });
        return doc.page_count;
      }
      await Bun.sleep(100);
    }
  }

  test("1 MB of text in a file that claims <Pages>1</Pages> counts a page per 2,400 characters", async () => {
    const text = "Bees communicate the direction of flowers with a waggle dance. ".repeat(40); // 2,520 characters
    expect(await parsedPageCount(await docx(paragraph(text).repeat(416)))).toBe(Math.ceil((416 * text.length) / 2400));
  }, 120_000);

  test("explicit page breaks and section breaks start pages; continuous sections do not", async () => {
    const section = (type: string) => `<w:p><w:pPr><w:sectPr><w:type w:val="${type}"/></w:sectPr></w:pPr></w:p>`;
    const body = [
      paragraph("Spring inspection."), pageBreak,
      paragraph("Summer honey flow."), section("nextPage"),
      paragraph("Autumn feeding.", "<w:pPr><w:pageBreakBefore/></w:pPr>"), section("continuous"),
      paragraph("Winter cluster."),
    ].join("");
    const doc = await ingest(server, ws, await docx(body));
    expect({ status: doc.status, pages: doc.page_count }).toEqual({ status: "ready", pages: 4 });
  });

  test("a page or column break inside a paragraph separates its words, and the text after a page break is on the next page", async () => {
    const run = (inner: string) => `<w:r>${inner}</w:r>`;
    const text = (value: string) => run(`<w:t xml:space="preserve">${value}</w:t>`);
    const body =
      `<w:p>${text("Opening page tailword")}${run('<w:br w:type="page"/>')}${text("headword on the second page")}</w:p>` +
      `<w:p>${text("leftcolumn")}${run('<w:br w:type="column"/>')}${text("rightcolumn")}</w:p>`;
    const parsed = await parsedDocx(body);
    expect(parsed.pageCount).toBe(2);
    expect(pagesAndTexts(parsed)).toEqual([
      [1, "Opening page tailword"],
      [2, "headword on the second page\n\nleftcolumn\nrightcolumn"],
    ]);
  });

  test("what Word shows is read and what it hides is not: a simple field's result, bidirectional runs, ruby's base; hidden runs left out", async () => {
    const run = (value: string, properties = "") => `<w:r>${properties}<w:t xml:space="preserve">${value}</w:t></w:r>`;
    const body =
      `<w:p>${run("Figure ")}<w:fldSimple w:instr=" SEQ Figure \\* ARABIC ">${run("7")}</w:fldSimple>${run(": quarterly revenue")}</w:p>` +
      `<w:p>${run("Customer: ")}<w:fldSimple w:instr=" MERGEFIELD Name ">${run("Mango Ltd")}</w:fldSimple></w:p>` +
      `<w:p>${run("before ")}<w:dir w:val="rtl">${run("dirword")}</w:dir>${run(" ")}<w:bdo w:val="rtl">${run("bdoword")}</w:bdo>${run(" after")}</w:p>` +
      `<w:p>${run("東京 ")}<w:ruby><w:rubyPr/><w:rt>${run("とうきょう")}</w:rt><w:rubyBase>${run("大学")}</w:rubyBase></w:ruby></w:p>` +
      `<w:p>${run("visible words ")}${run("vanishedsecret", "<w:rPr><w:vanish/></w:rPr>")}${run("shownagain", '<w:rPr><w:vanish w:val="0"/></w:rPr>')}</w:p>` +
      `${pageBreak}${paragraph("Text after the break.")}`;
    const parsed = await parsedDocx(body);
    // the pages are still counted in the rewritten body (its XML declaration kept whole)
    expect(parsed.pageCount).toBe(2);
    expect(pagesAndTexts(parsed)).toEqual([
      [1, "Figure 7: quarterly revenue\n\nCustomer: Mango Ltd\n\nbefore dirword bdoword after\n\n東京 大学\n\nvisible words shownagain"],
      [2, "Text after the break."],
    ]);
  });

  test("a text box written twice (mc:Choice and its mc:Fallback) counts once toward the pages, as it is read once", async () => {
    const box = "Field notes from the apiary. ".repeat(45); // 1,305 characters: twice over a page of 2,400
    const txbx = `<w:txbxContent><w:p><w:r><w:t xml:space="preserve">${box}</w:t></w:r></w:p></w:txbxContent>`;
    const alternate =
      '<w:r><mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" xmlns:v="urn:schemas-microsoft-com:vml">' +
      `<mc:Choice Requires="wps"><w:drawing>${txbx}</w:drawing></mc:Choice><mc:Fallback><w:pict><v:shape><v:textbox>${txbx}</v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r>`;
    const body = `<w:p>${alternate}</w:p>${pageBreak}${paragraph("secondpagemarker on page two.")}`;
    const parsed = await parsedDocx(body);
    expect(parsed.pageCount).toBe(2);
    expect(parsed.sections.map((section) => [section.page, section.text.length > 1000 ? "box" : section.text])).toEqual([
      [1, "box"],
      [2, "secondpagemarker on page two."],
    ]);
  });

  test("a footnote's text is kept without the arrow that links back to its reference", async () => {
    const doc = new Document({
      footnotes: { 1: { children: [new Paragraph("The queen lays up to 2,000 eggs a day.")] } },
      sections: [{ children: [new Paragraph({ children: [new TextRun("Colonies grow fast in spring"), new FootnoteReferenceRun(1)] })] }],
    });
    const parsed = await parseDocument("docx", new Uint8Array(await Packer.toBuffer(doc)), "notes.docx");
    const text = parsed.sections.map((section) => section.text).join("\n\n");
    expect(text).toContain("Colonies grow fast in spring");
    expect(text).toContain("The queen lays up to 2,000 eggs a day.");
    expect(text).not.toContain("↑");
  });

  test("a section break ends its section after the text of the paragraph that carries it", async () => {
    // Word stores the break in the properties of the section's last paragraph, ahead of that paragraph's
    // own text; counted where it stands, the text went to the next section's page.
    const ending = (text: string, type: string) => paragraph(text, `<w:pPr><w:sectPr><w:type w:val="${type}"/></w:sectPr></w:pPr>`);
    const body = ending("First section text.", "nextPage") + ending("Second section text.", "oddPage") + paragraph("Third section text.");
    const parsed = await parsedDocx(body);
    expect(parsed.pageCount).toBe(3);
    expect(pagesAndTexts(parsed)).toEqual([
      [1, "First section text."],
      [2, "Second section text."],
      [3, "Third section text."],
    ]);
  });

  test("pages follow the breaks: text before a page break is never cited on a page after it", async () => {
    // 4 pages of text (34 paragraphs, 9,354 characters), a page break, then one short paragraph: 5 pages.
    // Spread evenly over the 5 pages, the last fifth of the long run's text would be cited on page 5.
    const filler = (i: number) => `Paragraph ${i} of the long run tells how the colony stores honey for the winter months ahead. `.repeat(3);
    const body = Array.from({ length: 34 }, (_, i) => paragraph(filler(i))).join("") + pageBreak + paragraph("GAMMAMARK closes the document.");
    const doc = await ingest(server, ws, await docx(body));
    expect({ status: doc.status, pages: doc.page_count }).toEqual({ status: "ready", pages: 5 });
    const chunks = await allChunks(server, ws, doc.id);
    const last = chunks.filter((chunk) => chunk.text.includes("GAMMAMARK"));
    expect(last.map((chunk) => chunk.end_page)).toEqual([5]);
    const before = chunks.filter((chunk) => !chunk.text.includes("GAMMAMARK"));
    expect(before.length).toBeGreaterThan(2);
    for (const chunk of before) expect({ chunk: chunk.chunk_index, end: chunk.end_page! <= 4 }).toEqual({ chunk: chunk.chunk_index, end: true });
    expect(before[0].start_page).toBe(1);
  });

  test("a table keeps its rows: cells joined with | on one line, although Word puts each cell's text in a paragraph", async () => {
    const cell = (text: string) => `<w:tc>${paragraph(text)}</w:tc>`;
    const row = (...cells: string[]) => `<w:tr>${cells.map(cell).join("")}</w:tr>`;
    const table = `<w:tbl>${row("Desert", "Area")}${row("Sahara", "9200000")}${row("Gobi", "1295000")}</w:tbl>`;
    const doc = await ingest(server, ws, await docx(paragraph("Deserts by area.") + table));
    expect(doc.status).toBe("ready");
    const text = (await allChunks(server, ws, doc.id)).map((chunk) => chunk.text).join("\n");
    expect(text).toContain("Desert | Area\nSahara | 9200000\nGobi | 1295000");
  });

  test("a short real Word document keeps its small count, and its text after the breaks is cited on the pages they start", async () => {
    // A heading, a page of text, then "Page 2", two page breaks, "Page 4". The heading's text comes before
    // the page breaks in the body too: left out of the count, every page's text was cited a page early or more.
    const file = new File([readFileSync(join(SHARED_SAMPLES_DIR, "docx/sample_docx_1.docx"))], "sample_docx_1.docx");
    const doc = await ingest(server, ws, file);
    expect({ status: doc.status, pages: doc.page_count }).toEqual({ status: "ready", pages: 4 });
    const chunks = await allChunks(server, ws, doc.id);
    expect(chunks.map((chunk) => [chunk.start_page, chunk.end_page])).toEqual([[1, 4]]);
    expect(chunks[0].text).toEndWith("Page 2\n\nPage 4\n\n… page 3 is blank");
  });
});

describe(".pptx text", () => {
  test("a line break inside a paragraph (Shift+Enter) separates its words", async () => {
    const deck = new PptxGenJS();
    deck.addSlide().addText([{ text: "joinedword" }, { text: "afterbreakword", options: { softBreakBefore: true } }], { x: 1, y: 1, w: 6, h: 2 });
    const bytes = new Uint8Array((await deck.write({ outputType: "nodebuffer" })) as Buffer);
    expect(new TextDecoder().decode((await JSZip.loadAsync(bytes).then((zip) => zip.file("ppt/slides/slide1.xml")!.async("uint8array"))))).toContain("<a:br");
    const parsed = await parseDocument("pptx", bytes, "breaks.pptx");
    expect(parsed.sections.map((section) => section.text)).toEqual(["joinedword\nafterbreakword"]);
  });
});

describe(".pptx alternate content", () => {
  test("a shape written twice (mc:Choice and its mc:Fallback) is read once", async () => {
    const deck = new PptxGenJS();
    deck.addSlide().addText("altcontentfennel grows by the door", { x: 1, y: 1, w: 6, h: 2 });
    const zip = await JSZip.loadAsync((await deck.write({ outputType: "nodebuffer" })) as Buffer);
    const part = "ppt/slides/slide1.xml";
    const xml = await zip.file(part)!.async("string");
    const shape = /<p:sp>[\s\S]*?<\/p:sp>/.exec(xml)![0];
    const alternate = `<mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><mc:Choice Requires="p14">${shape}</mc:Choice><mc:Fallback>${shape}</mc:Fallback></mc:AlternateContent>`;
    zip.file(part, xml.replace(shape, alternate));
    const parsed = await parseDocument("pptx", await zip.generateAsync({ type: "uint8array" }), "alternate.pptx");
    expect(parsed.sections.map((section) => section.text)).toEqual(["altcontentfennel grows by the door"]);
    // a Fallback whose Choice holds no shape (a picture) is read
    const pictureOnly = `<mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><mc:Choice Requires="p14"><p:pic/></mc:Choice><mc:Fallback>${shape}</mc:Fallback></mc:AlternateContent>`;
    zip.file(part, xml.replace(shape, pictureOnly));
    const fallback = await parseDocument("pptx", await zip.generateAsync({ type: "uint8array" }), "fallback.pptx");
    expect(fallback.sections.map((section) => section.text)).toEqual(["altcontentfennel grows by the door"]);
  });
});

describe("xlsx reader", () => {
  test("a long number in the General format is indexed with all its digits, not as Excel's 1.23457E+11; other formats as shown", async () => {
    const sheet = XLSX.utils.aoa_to_sheet([["Order", "Amount", "Share"], [123456789012, 1234.5, 0.25]]);
    sheet.C2!.z = "0%";
    XLSX.utils.sheet_add_aoa(sheet, [["Phone", 123456789012, null]], { origin: "A3" });
    sheet.B3!.z = "@"; // a number in a Text column: its digits too
    const book = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(book, sheet, "Orders");
    const parsed = await parseDocument("xlsx", new Uint8Array(XLSX.write(book, { type: "array", bookType: "xlsx" })), "orders.xlsx");
    expect(parsed.sections.map((section) => section.text)).toEqual(["Order: 123456789012; Amount: 1234.5; Share: 25%\nOrder: Phone; Amount: 123456789012"]);
  });

  test("Excel's built-in short date shows its year whole, as Excel does in the US; a date format the author chose stays as it is", async () => {
    const sheet = XLSX.utils.aoa_to_sheet([["When", "Stamp", "Custom", "Iso"], [45292, 45292.5, 45292, 45292]]);
    [sheet.A2!.z, sheet.B2!.z, sheet.C2!.z, sheet.D2!.z] = ["m/d/yy", "m/d/yy h:mm", "d/m/yy", "yyyy-mm-dd"];
    const book = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(book, sheet, "Dates");
    const parsed = await parseDocument("xlsx", new Uint8Array(XLSX.write(book, { type: "array", bookType: "xlsx" })), "dates.xlsx");
    expect(parsed.sections.map((section) => section.text)).toEqual(["When: 1/1/2024; Stamp: 1/1/2024 12:00; Custom: 1/1/24; Iso: 2024-01-01"]);
    // in a workbook counting from 1904, the same serial is four years and a day later
    book.Workbook = { WBProps: { date1904: true } };
    const from1904 = await parseDocument("xlsx", new Uint8Array(XLSX.write(book, { type: "array", bookType: "xlsx" })), "dates1904.xlsx");
    expect(from1904.sections.map((section) => section.text)).toEqual(["When: 1/2/2028; Stamp: 1/2/2028 12:00; Custom: 2/1/28; Iso: 2028-01-02"]);
  });

  test("an empty sheet counts as a page but gives no chunk of its name alone; a workbook of empty sheets fails as having no text", async () => {
    const workbook = (sheets: [string, unknown[][]][]) => {
      const book = XLSX.utils.book_new();
      for (const [name, rows] of sheets) XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet(rows), name);
      return new Uint8Array(XLSX.write(book, { type: "array", bookType: "xlsx" }));
    };
    const mixed = await ingest(server, ws, new File([workbook([["Empty", []], ["Prices", [["Fruit", "Price"], ["Pear", 3]]]])], "mixed.xlsx"));
    expect({ status: mixed.status, page_count: mixed.page_count }).toEqual({ status: "ready", page_count: 2 });
    expect((await allChunks(server, ws, mixed.id)).map((chunk) => [chunk.section_heading, chunk.text, chunk.start_page])).toEqual([
      ["Prices", "Prices\n\nFruit: Pear; Price: 3", 2],
    ]);
    await expectFailed(new File([workbook([["S1", []], ["S2", []]])], "empty.xlsx"), "No text could be extracted from this file");
  });

  test("a workbook with __proto__ as sheet name, shared string and comment reference parses and pollutes nothing", async () => {
    const main = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
    const rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
    const rels = (...targets: Array<[string, string]>) =>
      `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${targets
        .map(([type, target], i) => `<Relationship Id="rId${i + 1}" Type="${rel}/${type}" Target="${target}"/>`)
        .join("")}</Relationships>`;
    const zip = new JSZip();
    zip.file("[Content_Types].xml", '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
      '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>' +
      '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>' +
      '<Override PartName="/xl/comments1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.comments+xml"/></Types>');
    zip.file("_rels/.rels", rels(["officeDocument", "xl/workbook.xml"]));
    zip.file("xl/workbook.xml", `<?xml version="1.0"?><workbook ${main} xmlns:r="${rel}"><sheets><sheet name="__proto__" sheetId="1" r:id="rId1"/></sheets></workbook>`);
    zip.file("xl/_rels/workbook.xml.rels", rels(["worksheet", "worksheets/sheet1.xml"], ["sharedStrings", "sharedStrings.xml"]));
    zip.file("xl/sharedStrings.xml", `<?xml version="1.0"?><sst ${main} count="4" uniqueCount="4">` +
      "<si><t>__proto__</t></si><si><t>constructor</t></si><si><t>hive ledger</t></si><si><t>prototype</t></si></sst>");
    zip.file("xl/worksheets/sheet1.xml", `<?xml version="1.0"?><worksheet ${main}><sheetData>` +
      '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>' +
      '<row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2" t="s"><v>3</v></c></row></sheetData></worksheet>');
    zip.file("xl/worksheets/_rels/sheet1.xml.rels", rels(["comments", "../comments1.xml"]));
    // CVE-2023-30533: SheetJS before 0.19.3 looked this comment's cell up as sheet["__proto__"] and set `c` on Object.prototype.
    zip.file("xl/comments1.xml", `<?xml version="1.0"?><comments ${main}><authors><author>a</author></authors>` +
      '<commentList><comment ref="__proto__" authorId="0"><text><t>polluted</t></text></comment></commentList></comments>');
    const bytes = new Uint8Array(await zip.generateAsync({ type: "uint8array" }));

    // Parsing runs outside this thread when uploaded, so pollution is checked on a parse in this one.
    const builtIns = Object.getOwnPropertyNames(Object.prototype);
    const parsed = await parseDocument("xlsx", bytes, "proto.xlsx");
    expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(builtIns);
    expect(({} as Record<string, unknown>).c).toBeUndefined();
    expect(parsed.sections.map((section) => [section.heading, section.text])).toEqual([["__proto__", "__proto__: hive ledger; constructor: prototype"]]);

    const doc = await ingest(server, ws, new File([bytes], "proto.xlsx"));
    expect({ status: doc.status, pages: doc.page_count }).toEqual({ status: "ready", pages: 1 });
    const chunks = await allChunks(server, ws, doc.id);
    expect(chunks.some((chunk) => chunk.text.includes("__proto__: hive ledger; constructor: prototype"))).toBe(true);
  });
});

const FAT_SECTOR = 0xfffffffd;
const END_OF_CHAIN = 0xfffffffe;
const NO_ENTRY = 0xffffffff;

/** A directory entry of a Compound File Binary container (MS-CFB 2.6), written by hand so its links can lie. */
function entry(name: string, type: number, links: { child?: number; right?: number; start?: number; size?: number } = {}): Buffer {
  const bytes = Buffer.alloc(128);
  const encoded = Buffer.from(`${name}\0`, "utf16le");
  encoded.copy(bytes);
  bytes.writeUInt16LE(encoded.length, 0x40);
  bytes[0x42] = type;
  bytes[0x43] = 1;
  bytes.writeUInt32LE(NO_ENTRY, 0x44);
  bytes.writeUInt32LE(links.right ?? NO_ENTRY, 0x48);
  bytes.writeUInt32LE(links.child ?? NO_ENTRY, 0x4c);
  bytes.writeUInt32LE(links.start ?? END_OF_CHAIN, 0x74);
  bytes.writeUInt32LE(links.size ?? 0, 0x78);
  return bytes;
}

/** A version 3 container (512-byte sectors): the header, one FAT sector (sector 0), the directory (sector 1), two sectors of data. */
function compoundFile(fat: number[], entries: Buffer[]): Uint8Array<ArrayBuffer> {
  const header = Buffer.alloc(512);
  Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(header);
  header.writeUInt16LE(0x3e, 0x18); // minor version
  header.writeUInt16LE(3, 0x1a); // major version
  header.writeUInt16LE(0xfffe, 0x1c); // little-endian
  header.writeUInt16LE(9, 0x1e); // 512-byte sectors
  header.writeUInt16LE(6, 0x20); // 64-byte mini sectors
  header.writeUInt32LE(1, 0x2c); // one FAT sector
  header.writeUInt32LE(1, 0x30); // the directory starts at sector 1
  header.writeUInt32LE(4096, 0x38); // mini stream cutoff
  header.writeUInt32LE(END_OF_CHAIN, 0x3c); // no mini FAT
  header.writeUInt32LE(END_OF_CHAIN, 0x44); // no DIFAT sectors
  for (let i = 0; i < 109; i++) header.writeUInt32LE(i === 0 ? 0 : NO_ENTRY, 0x4c + 4 * i);
  const fatSector = Buffer.alloc(512, 0xff);
  fat.forEach((next, i) => fatSector.writeUInt32LE(next, 4 * i));
  const directory = Buffer.alloc(512);
  Buffer.concat(entries).copy(directory);
  return new Uint8Array(Buffer.concat([header, fatSector, directory, Buffer.alloc(1024, 0x41)]));
}

describe("Office files in the older container", () => {
  test("a password-protected docx, pptx or xlsx says so; an Office 97-2003 file under a new extension is told to be saved as one", async () => {
    // Office keeps a protected file's zip encrypted in the EncryptedPackage stream of a Compound File Binary container.
    const container = XLSX.CFB.utils.cfb_new();
    XLSX.CFB.utils.cfb_add(container, "/EncryptionInfo", Buffer.alloc(256, 1));
    XLSX.CFB.utils.cfb_add(container, "/EncryptedPackage", Buffer.alloc(8192, 7));
    const encrypted = new Uint8Array(XLSX.CFB.write(container, { type: "buffer" }));
    for (const format of ["docx", "pptx", "xlsx"]) {
      await expectFailed(new File([encrypted], `locked.${format}`), `${format.toUpperCase()} file is password-protected: save it without a password and upload it again`);
    }
    const workbook = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(workbook, XLSX.utils.aoa_to_sheet([["harbour", "tides"]]), "Sheet1");
    const legacy = new Uint8Array(XLSX.write(workbook, { bookType: "xls", type: "buffer" }));
    await expectFailed(new File([legacy], "old.xlsx"), "This is an Office 97-2003 file (.xls), not XLSX: save it as .xlsx and upload it again");
    // Named by its own streams, not by the extension it came under, nor by words in its text.
    await expectFailed(new File([legacy], "old.docx"), "This is an Office 97-2003 file (.xls), not DOCX: save it as .xlsx and upload it again");
    const word = XLSX.CFB.utils.cfb_new();
    XLSX.CFB.utils.cfb_add(word, "/WordDocument", Buffer.from("notes on the EncryptedPackage stream", "utf16le"));
    const doc = new Uint8Array(XLSX.CFB.write(word, { type: "buffer" }));
    await expectFailed(new File([doc], "notes.docx"), "This is an Office 97-2003 file (.doc), not DOCX: save it as .docx and upload it again");
    // Chains and links that loop are no trap (a 2 KB file had taken SheetJS's reader to 1.4 GB).
    const fatLoop = compoundFile([FAT_SECTOR, END_OF_CHAIN, 3, 2], [entry("Root Entry", 5, { child: 1 }), entry("WordDocument", 2, { start: 3, size: 8192 })]);
    await expectFailed(new File([fatLoop], "fat-loop.docx"), "This is an Office 97-2003 file (.doc), not DOCX: save it as .docx and upload it again");
    const siblingLoop = compoundFile([FAT_SECTOR, END_OF_CHAIN], [entry("Root Entry", 5, { child: 1 }), entry("1Table", 2, { right: 2 }), entry("WordDocument", 2, { right: 1 })]);
    await expectFailed(new File([siblingLoop], "sibling-loop.docx"), "This is an Office 97-2003 file (.doc), not DOCX: save it as .docx and upload it again");
    // A name length that counts the entry's padding (64 bytes) still names the stream.
    const padded = entry("WordDocument", 2);
    padded.writeUInt16LE(64, 0x40);
    const directoryLoop = compoundFile([FAT_SECTOR, 1], [entry("Root Entry", 5, { child: 1 }), padded]);
    await expectFailed(new File([directoryLoop], "directory-loop.docx"), "This is an Office 97-2003 file (.doc), not DOCX: save it as .docx and upload it again");
    // Named by the file's own streams, not those of an object embedded in it: a workbook holding a Word
    // object, a Word document holding a chart, a presentation holding one.
    const embedding = [
      ["/Workbook", "/MBD0001A2B3/WordDocument", ".xls", "xlsx"],
      ["/WordDocument", "/ObjectPool/_1234/Workbook", ".doc", "docx"],
      ["/PowerPoint Document", "/MBD0001A2B4/Workbook", ".ppt", "pptx"],
    ];
    for (const [own, embedded, extension, saveAs] of embedding) {
      const container = XLSX.CFB.utils.cfb_new();
      XLSX.CFB.utils.cfb_add(container, own, Buffer.alloc(8192, 1));
      XLSX.CFB.utils.cfb_add(container, embedded, Buffer.alloc(8192, 2));
      await expectFailed(new File([new Uint8Array(XLSX.CFB.write(container, { type: "buffer" }))], "old.docx"), `This is an Office 97-2003 file (${extension}), not DOCX: save it as .${saveAs} and upload it again`);
    }
    const other = XLSX.CFB.utils.cfb_new();
    XLSX.CFB.utils.cfb_add(other, "/__substg1.0_0037001F", Buffer.from("an Outlook message", "utf16le"));
    await expectFailed(new File([new Uint8Array(XLSX.CFB.write(other, { type: "buffer" }))], "mail.pptx"), "Not a valid PPTX file");
  });
});
