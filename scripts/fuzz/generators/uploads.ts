// Categories aimed at file uploads: absurd file names, multipart oddities, zip bombs, corrupt PDFs,
// image dimension bombs and text that is slow for naive parsers.
import type { CaseSpec, LiveIds } from "../case.ts";
import type { Category, GenContext } from "./context.ts";
import { API_KEY, uploadRequest } from "./common.ts";
import { BOUNDARY, MULTIPART_TYPE, filePart, multipart, type Part } from "../multipart.ts";
import { corruptPdf, docxBomb, pathologicalText, pngDimensionBomb, pptxBomb, tiffDimensionBomb, xlsxBomb, type BombShape, type CorruptPdf } from "../hostile-files.ts";

/** A file name no traversal may turn into a real path: the harness checks it never appears outside the data dir. */
export const ESCAPE_MARKER = "quarry-fuzz-escaped";

const FILE_NAMES: [name: string, expect: CaseSpec["expect"]][] = [
  [`../../../../${ESCAPE_MARKER}.txt`, "any"],
  [`..\\..\\..\\${ESCAPE_MARKER}.txt`, "any"],
  [`%2e%2e%2f%2e%2e%2f${ESCAPE_MARKER}.txt`, "any"],
  [`/tmp/${ESCAPE_MARKER}.txt`, "any"],
  [`a/b/../../../${ESCAPE_MARKER}.md`, "any"],
  ["./.txt", "any"],
  [".txt", "any"],
  ["", "reject"],
  ["noextension", "reject"],
  ["trailing-dot.", "reject"],
  ["UPPER.TXT", "any"],
  ["double.txt.exe", "reject"],
  ["payload.exe", "reject"],
  ["nul\u0000byte.txt", "any"],
  [`${"é".repeat(150)}.txt`, "any"], // 300 bytes of UTF-8
  [`${"🦀".repeat(80)}.md`, "any"], // 320 bytes
  [`${"a".repeat(300)}.txt`, "any"],
  [`${"漢".repeat(3000)}.txt`, "any"],
  ["CON.txt", "any"],
  ['quote".txt', "any"],
  ["semi;colon=.txt", "any"],
  ["\u202Etxt.exe", "reject"],
  ["\u202Eexe.txt", "any"],
  ["zero\u200Bwidth.csv", "any"],
  [" .txt", "any"],
  ["..", "reject"],
  [".", "reject"],
  ["name\r\nContent-Type: text/html\r\n\r\n.txt", "any"],
];

const fileNames: Category = {
  name: "file-names",
  weight: 6,
  generate({ rng }) {
    const [filename, expect] = rng.pick(FILE_NAMES);
    const method = rng.next() < 0.8 ? "POST" : "PUT";
    const shown = JSON.stringify(filename.length > 60 ? `${filename.slice(0, 30)}…(${Buffer.byteLength(filename)} bytes)` : filename);
    return {
      name: `${method} file named ${shown}`,
      expect,
      createsDocument: true,
      build: (ids) => uploadRequest(ids, multipart([filePart(filename, "Fuzz file content. Hello.")]), MULTIPART_TYPE, API_KEY, method),
    };
  },
};

const TEXT = "Quarry multipart fuzz text.";
const MULTIPART_CASES: [name: string, body: () => Uint8Array, contentType: string, expect: CaseSpec["expect"]][] = [
  ["no file part", () => multipart([{ name: "metadata", data: "{}" }]), MULTIPART_TYPE, "reject"],
  ["file as a plain field", () => multipart([{ name: "file", data: TEXT }]), MULTIPART_TYPE, "reject"],
  ["two file parts", () => multipart([filePart("a.txt", TEXT), filePart("b.txt", TEXT)]), MULTIPART_TYPE, "any"],
  ["metadata not JSON", () => multipart([filePart("a.txt", TEXT), { name: "metadata", data: "{not json" }]), MULTIPART_TYPE, "reject"],
  ["metadata a JSON array", () => multipart([filePart("a.txt", TEXT), { name: "metadata", data: "[1,2]" }]), MULTIPART_TYPE, "reject"],
  ["metadata null", () => multipart([filePart("a.txt", TEXT), { name: "metadata", data: "null" }]), MULTIPART_TYPE, "any"],
  ["metadata a string", () => multipart([filePart("a.txt", TEXT), { name: "metadata", data: '"x"' }]), MULTIPART_TYPE, "reject"],
  ["metadata 10k deep", () => multipart([filePart("a.txt", TEXT), { name: "metadata", data: '{"a":'.repeat(10_000) + "1" + "}".repeat(10_000) }]), MULTIPART_TYPE, "any"],
  ["metadata of 2 MB", () => multipart([filePart("a.txt", TEXT), { name: "metadata", data: JSON.stringify({ blob: "m".repeat(2 << 20) }) }]), MULTIPART_TYPE, "any"],
  ["metadata sent as a file", () => multipart([filePart("a.txt", TEXT), filePart("meta.json", '{"a":1}')].map((p, i) => (i ? { ...p, name: "metadata" } : p))), MULTIPART_TYPE, "any"],
  ["two metadata parts", () => multipart([filePart("a.txt", TEXT), { name: "metadata", data: '{"a":1}' }, { name: "metadata", data: '{"b":2}' }]), MULTIPART_TYPE, "any"],
  ["no boundary parameter", () => multipart([filePart("a.txt", TEXT)]), "multipart/form-data", "reject"],
  ["wrong boundary", () => multipart([filePart("a.txt", TEXT)]), "multipart/form-data; boundary=somethingelse", "reject"],
  ["no closing boundary", () => multipart([filePart("a.txt", TEXT)], { close: false }), MULTIPART_TYPE, "any"],
  ["truncated in a part", () => multipart([filePart("a.txt", TEXT.repeat(100))]).subarray(0, 300), MULTIPART_TYPE, "reject"],
  ["empty body", () => new Uint8Array(0), MULTIPART_TYPE, "reject"],
  ["empty file", () => multipart([filePart("empty.txt", "")]), MULTIPART_TYPE, "any"],
  ["part without Content-Disposition", () => Buffer.from(`--${BOUNDARY}\r\nContent-Type: text/plain\r\n\r\n${TEXT}\r\n--${BOUNDARY}--\r\n`), MULTIPART_TYPE, "reject"],
  ["boundary of 200 characters", () => multipart([filePart("a.txt", TEXT)], { boundary: "b".repeat(200) }), `multipart/form-data; boundary=${"b".repeat(200)}`, "any"],
  ["5000 junk fields", () => multipart([filePart("a.txt", TEXT), ...Array.from({ length: 5000 }, (_, i): Part => ({ name: `junk${i}`, data: "x" }))]), MULTIPART_TYPE, "any"],
  ["part header of 100 KB", () => multipart([{ ...filePart("a.txt", TEXT), headers: [`X-Long: ${"h".repeat(100_000)}`] }]), MULTIPART_TYPE, "any"],
  ["base64 transfer encoding on the part", () => multipart([{ ...filePart("a.txt", Buffer.from(TEXT).toString("base64")), headers: ["Content-Transfer-Encoding: base64"] }]), MULTIPART_TYPE, "any"],
  ["PDF bytes named .txt", () => multipart([filePart("really-a-pdf.txt", "%PDF-1.7\n%\u00e2\u00e3\n1 0 obj\n<<>>\nendobj\n")]), MULTIPART_TYPE, "any"],
  ["text named .pdf", () => multipart([filePart("not-a-pdf.pdf", TEXT, "application/pdf")]), MULTIPART_TYPE, "any"],
  ["text named .png", () => multipart([filePart("not-an-image.png", TEXT, "image/png")]), MULTIPART_TYPE, "any"],
  ["text named .docx", () => multipart([filePart("not-a-zip.docx", TEXT)]), MULTIPART_TYPE, "any"],
  ["binary zeros named .txt", () => multipart([filePart("zeros.txt", new Uint8Array(64 * 1024))]), MULTIPART_TYPE, "any"],
  ["LF-only line endings", () => Buffer.from(Buffer.from(multipart([filePart("a.txt", TEXT)])).toString("latin1").replaceAll("\r\n", "\n"), "latin1"), MULTIPART_TYPE, "any"],
];

const multipartOddities: Category = {
  name: "multipart",
  weight: 6,
  generate({ rng }) {
    const [name, body, contentType, expect] = rng.pick(MULTIPART_CASES);
    const method = rng.next() < 0.8 ? "POST" : "PUT";
    return { name: `${method} ${name}`, expect, createsDocument: true, build: (ids) => uploadRequest(ids, body(), contentType, API_KEY, method) };
  },
};

function fileUpload(name: string, filename: string, bytes: Uint8Array): CaseSpec {
  return {
    name: `${name} (${filename}, ${Math.round(bytes.length / 1024)} KB)`,
    expect: "any",
    createsDocument: true,
    build: (ids: LiveIds) => uploadRequest(ids, multipart([filePart(filename, bytes)]), MULTIPART_TYPE),
  };
}

const bombs: Category = {
  name: "bombs",
  weight: 3,
  async generate({ rng, bombMegabytes, memo }: GenContext) {
    const mb = bombMegabytes;
    const kind = rng.pick(["docx", "docx", "xlsx", "pptx", "png", "tiff"] as const);
    if (kind === "docx") {
      const shape = rng.pick<BombShape>(["one-huge-part", "padding-part", "many-parts"]);
      return fileUpload(`docx zip bomb, ${shape}, inflates to ${mb} MB`, "bomb.docx", await memo(`docx-${shape}`, () => docxBomb(mb, shape)));
    }
    if (kind === "xlsx") return fileUpload(`xlsx zip bomb, inflates to ${mb} MB`, "bomb.xlsx", await memo("xlsx", () => xlsxBomb(mb)));
    if (kind === "pptx") return fileUpload(`pptx zip bomb, inflates to ${mb} MB`, "bomb.pptx", await memo("pptx", () => pptxBomb(mb)));
    if (kind === "png") {
      const side = rng.pick([30_000, 65_535, 2_000_000_000]);
      return fileUpload(`png claiming ${side}x${side} pixels`, "bomb.png", pngDimensionBomb(side, side));
    }
    return fileUpload("tiff claiming 1,000,000² pixels", "bomb.tiff", tiffDimensionBomb());
  },
};

const PDF_KINDS: CorruptPdf[] = ["truncated", "random-after-header", "flipped-bytes", "huge-object-count", "page-count-lie", "cyclic-page-tree", "deep-nesting", "flate-bomb", "too-many-pages"];

const corruptPdfs: Category = {
  name: "corrupt-pdf",
  weight: 4,
  async generate({ rng, bombMegabytes, memo }: GenContext) {
    const kind = rng.pick(PDF_KINDS);
    const cached = ["huge-object-count", "flate-bomb"].includes(kind);
    const bytes = cached ? await memo(`pdf-${kind}`, () => corruptPdf(kind, rng, bombMegabytes)) : await corruptPdf(kind, rng, bombMegabytes);
    return fileUpload(`corrupt PDF: ${kind}`, "corrupt.pdf", bytes);
  },
};

const parserStall: Category = {
  name: "parser-stall",
  weight: 3,
  generate({ rng }) {
    const kind = rng.pick(["md-long-line", "md-brackets", "md-emphasis", "html-nesting", "csv-wide", "json-deep"] as const);
    const size = rng.pick([80_000, 200_000]);
    const { name, bytes } = pathologicalText(kind, size);
    return fileUpload(`slow-parser input ${kind}`, name, bytes);
  },
};

export const UPLOAD_CATEGORIES = [fileNames, multipartOddities, bombs, corruptPdfs, parserStall];
