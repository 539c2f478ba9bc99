// Hostile documents built at run time: zip bombs in Office containers, corrupt and pathological PDFs,
// images whose headers claim absurd sizes, and text that trips naive parsers. Sizes scale with `megabytes`.
import JSZip from "jszip";
import { deflateSync } from "node:zlib";
import { PDFDocument, StandardFonts } from "pdf-lib";
import type { Rng } from "./rng.ts";

const MB = 1024 * 1024;
const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
const REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships";
const OFFICE_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

/** `bytes` of a short pattern repeated: compresses about 1000:1, so a few hundred KB inflate to `bytes`. */
function repeated(pattern: string, bytes: number): Uint8Array {
  return Buffer.alloc(Math.floor(bytes / pattern.length) * pattern.length, pattern);
}

/** An XML part whose middle is `bytes` of a repeated element. */
function xmlPart(open: string, element: string, close: string, bytes: number): Uint8Array {
  return Buffer.concat([Buffer.from(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>${open}`), repeated(element, bytes), Buffer.from(close)]);
}

function contentTypes(overrides: Record<string, string>): string {
  const parts = Object.entries(overrides).map(([part, type]) => `<Override PartName="${part}" ContentType="${type}"/>`);
  return `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>${parts.join("")}</Types>`;
}

function rels(list: [id: string, type: string, target: string][]): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${REL_NS}">${list.map(([id, type, target]) => `<Relationship Id="${id}" Type="${OFFICE_REL}/${type}" Target="${target}"/>`).join("")}</Relationships>`;
}

async function zip(files: Record<string, string | Uint8Array>): Promise<Uint8Array> {
  const archive = new JSZip();
  for (const [name, data] of Object.entries(files)) archive.file(name, data);
  return archive.generateAsync({ type: "uint8array", compression: "DEFLATE", compressionOptions: { level: 9 } });
}

const DOCX_BASE = {
  "[Content_Types].xml": contentTypes({ "/word/document.xml": "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml" }),
  "_rels/.rels": rels([["rId1", "officeDocument", "word/document.xml"]]),
};

export type BombShape = "one-huge-part" | "padding-part" | "many-parts";

/** A .docx whose parts inflate to `megabytes` in total. */
export function docxBomb(megabytes: number, shape: BombShape): Promise<Uint8Array> {
  const paragraph = "<w:p><w:r><w:t>bomb bomb bomb bomb bomb bomb</w:t></w:r></w:p>";
  const smallDoc = `<?xml version="1.0" encoding="UTF-8"?><w:document ${W}><w:body>${paragraph}</w:body></w:document>`;
  switch (shape) {
    case "one-huge-part":
      return zip({ ...DOCX_BASE, "word/document.xml": xmlPart(`<w:document ${W}><w:body>`, paragraph, "</w:body></w:document>", megabytes * MB) });
    case "padding-part":
      return zip({ ...DOCX_BASE, "word/document.xml": smallDoc, "word/media/padding.bin": new Uint8Array(megabytes * MB) });
    case "many-parts": {
      const files: Record<string, string | Uint8Array> = { ...DOCX_BASE, "word/document.xml": smallDoc };
      const part = repeated(paragraph, (megabytes * MB) / 100);
      for (let i = 0; i < 100; i++) files[`word/custom${i}.xml`] = part;
      return zip(files);
    }
  }
}

/** An .xlsx whose one sheet inflates to `megabytes` of inline-string rows. */
export function xlsxBomb(megabytes: number): Promise<Uint8Array> {
  const sheetType = "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml";
  const ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
  return zip({
    "[Content_Types].xml": contentTypes({
      "/xl/workbook.xml": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
      "/xl/worksheets/sheet1.xml": sheetType,
    }),
    "_rels/.rels": rels([["rId1", "officeDocument", "xl/workbook.xml"]]),
    "xl/workbook.xml": `<?xml version="1.0" encoding="UTF-8"?><workbook ${ns} xmlns:r="${OFFICE_REL}"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    "xl/_rels/workbook.xml.rels": rels([["rId1", "worksheet", "worksheets/sheet1.xml"]]),
    "xl/worksheets/sheet1.xml": xmlPart(
      `<worksheet ${ns}><sheetData>`,
      '<row><c t="inlineStr"><is><t>bomb</t></is></c><c t="inlineStr"><is><t>bomb</t></is></c></row>',
      "</sheetData></worksheet>",
      megabytes * MB,
    ),
  });
}

/** A .pptx whose one slide inflates to `megabytes` of text runs. */
export function pptxBomb(megabytes: number): Promise<Uint8Array> {
  const p = 'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"';
  return zip({
    "[Content_Types].xml": contentTypes({
      "/ppt/presentation.xml": "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml",
      "/ppt/slides/slide1.xml": "application/vnd.openxmlformats-officedocument.presentationml.slide+xml",
    }),
    "_rels/.rels": rels([["rId1", "officeDocument", "ppt/presentation.xml"]]),
    "ppt/presentation.xml": `<?xml version="1.0" encoding="UTF-8"?><p:presentation ${p} xmlns:r="${OFFICE_REL}"><p:sldIdLst><p:sldId id="256" r:id="rId2"/></p:sldIdLst></p:presentation>`,
    "ppt/_rels/presentation.xml.rels": rels([["rId2", "slide", "slides/slide1.xml"]]),
    "ppt/slides/slide1.xml": xmlPart(
      `<p:sld ${p}><p:cSld><p:spTree><p:sp><p:txBody>`,
      "<a:p><a:r><a:t>bomb bomb bomb bomb</a:t></a:r></a:p>",
      "</p:txBody></p:sp></p:spTree></p:cSld></p:sld>",
      megabytes * MB,
    ),
  });
}

/** A small valid PDF with text on three pages: the base the corrupt variants start from. */
export async function validPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= 3; i++) doc.addPage().drawText(`Page ${i}: quarry fuzz document text.`, { x: 50, y: 700, font, size: 14 });
  return doc.save();
}

/** A PDF written by hand from object bodies (1-based), with a correct xref table. */
function handPdf(objects: string[], root = 1): Uint8Array {
  let out = "%PDF-1.7\n";
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root ${root} 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}

const PAGE = (parent: number, extra = "") => `<< /Type /Page /Parent ${parent} 0 R /MediaBox [0 0 612 792]${extra} >>`;

export type CorruptPdf =
  | "truncated"
  | "random-after-header"
  | "flipped-bytes"
  | "huge-object-count"
  | "page-count-lie"
  | "cyclic-page-tree"
  | "deep-nesting"
  | "flate-bomb"
  | "too-many-pages";

export async function corruptPdf(kind: CorruptPdf, rng: Rng, megabytes: number): Promise<Uint8Array> {
  switch (kind) {
    case "truncated": {
      const valid = await validPdf();
      return valid.subarray(0, rng.int(16, valid.length - 1));
    }
    case "random-after-header":
      return Buffer.concat([Buffer.from("%PDF-1.7\n"), rng.bytes(rng.int(100, 64 * 1024))]);
    case "flipped-bytes": {
      const copy = Uint8Array.from(await validPdf());
      for (let i = 0; i < 40; i++) copy[rng.int(0, copy.length - 1)] = rng.int(0, 255);
      return copy;
    }
    case "huge-object-count": {
      const count = Math.min(200_000, megabytes * 1_000);
      const objects = ["<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", PAGE(2)];
      for (let i = 0; i < count; i++) objects.push(`<< /N ${i} /A [${i} ${i} ${i}] >>`);
      return handPdf(objects);
    }
    case "page-count-lie":
      return handPdf(["<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 2000000000 >>", PAGE(2)]);
    case "cyclic-page-tree":
      return handPdf(["<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>", PAGE(2)]);
    case "deep-nesting": {
      const depth = 50_000;
      return handPdf(["<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", PAGE(2, ` /Deep ${"[".repeat(depth)}${"]".repeat(depth)}`)]);
    }
    case "flate-bomb": {
      const content = deflateSync(repeated("BT /F1 12 Tf 72 712 Td (bomb) Tj ET\n", megabytes * MB), { level: 9 });
      const objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        PAGE(2, " /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >>"),
        `<< /Length ${content.length} /Filter /FlateDecode >>\nstream\n${Buffer.from(content).toString("latin1")}\nendstream`,
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
      ];
      return handPdf(objects);
    }
    case "too-many-pages": {
      const pages = 3000;
      const kids = Array.from({ length: pages }, (_, i) => `${i + 3} 0 R`).join(" ");
      return handPdf(["<< /Type /Catalog /Pages 2 0 R >>", `<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`, ...Array.from({ length: pages }, () => PAGE(2))]);
    }
  }
}

function pngChunk(type: string, data: Uint8Array): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(Bun.hash.crc32(typed) >>> 0);
  return Buffer.concat([length, typed, crc]);
}

/** A PNG whose header claims width × height pixels, with only a few rows of real data. */
export function pngDimensionBomb(width: number, height: number): Uint8Array {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 0, 0, 0, 0], 8); // 8-bit greyscale, no interlace
  const rows = deflateSync(Buffer.alloc((Math.min(width, 100_000) + 1) * 4)); // far fewer rows than claimed
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pngChunk("IHDR", header), pngChunk("IDAT", rows), pngChunk("IEND", new Uint8Array(0))]);
}

/** A little-endian TIFF header pointing at an IFD that claims a huge image and strip offsets past the end. */
export function tiffDimensionBomb(): Uint8Array {
  const entries: [tag: number, type: number, value: number][] = [
    [256, 4, 1_000_000], // width
    [257, 4, 1_000_000], // height
    [258, 3, 8],
    [259, 3, 1],
    [262, 3, 1],
    [273, 4, 0x7fffffff], // strip offset far past the end of the file
    [277, 3, 1],
    [278, 4, 1_000_000],
    [279, 4, 0x7fffffff],
  ];
  const out = Buffer.alloc(8 + 2 + entries.length * 12 + 4);
  out.write("II", 0, "latin1");
  out.writeUInt16LE(42, 2);
  out.writeUInt32LE(8, 4);
  out.writeUInt16LE(entries.length, 8);
  entries.forEach(([tag, type, value], i) => {
    const at = 10 + i * 12;
    out.writeUInt16LE(tag, at);
    out.writeUInt16LE(type, at + 2);
    out.writeUInt32LE(1, at + 4);
    if (type === 3) out.writeUInt16LE(value, at + 8);
    else out.writeUInt32LE(value, at + 8);
  });
  return out;
}

/** Text that is slow for naive (quadratic or recursive) parsers of each text format. */
export function pathologicalText(kind: "md-long-line" | "md-brackets" | "md-emphasis" | "html-nesting" | "csv-wide" | "json-deep", size: number): { name: string; bytes: Uint8Array } {
  switch (kind) {
    case "md-long-line":
      return { name: "long-line.md", bytes: repeated("word ", size) };
    case "md-brackets":
      return { name: "brackets.md", bytes: Buffer.from("[".repeat(size) + "x" + "](".repeat(size / 4)) };
    case "md-emphasis":
      return { name: "emphasis.md", bytes: Buffer.from("*a _b ".repeat(size / 6) + "\n") };
    case "html-nesting":
      return { name: "nesting.html", bytes: Buffer.from("<div>".repeat(size / 5) + "deep" + "</div>".repeat(size / 6)) };
    case "csv-wide":
      return { name: "wide.csv", bytes: Buffer.from(Array.from({ length: size / 2 }, () => "a").join(",") + "\n" + '"unterminated') };
    case "json-deep":
      return { name: "deep.json", bytes: Buffer.from("[".repeat(size / 2) + "]".repeat(size / 2)) };
  }
}
