import { isSupportedType, type SupportedType } from "./file-types.ts";
import { ParseError, type ParsedDocument } from "./types.ts";

export { ParseError, type ParsedDocument, type ParsedSection } from "./types.ts";
export { MAX_PAGES, assertPageLimit } from "./page-limit.ts";
export { RICH_TYPES, SUPPORTED_TYPES, TEXT_TYPES, isSupportedType, type SupportedType } from "./file-types.ts";

type Parser = (data: Uint8Array) => Promise<ParsedDocument>;

/** TIFF's byte-order mark and 42, little- or big-endian. */
function isTiff(data: Uint8Array): boolean {
  const head = String.fromCharCode(...data.subarray(0, 4));
  return head === "II*\0" || head === "MM\0*";
}

/**
 * Images are read by their content, whatever image extension they came under (a JPEG saved as .tiff, a
 * PNG as .jpg): PNG, JPEG and WebP by the canvas's decoder, which tells them apart itself, TIFF by utif2.
 */
function image(typeName: string): Parser {
  return async (data) => (isTiff(data) ? (await import("./tiff.ts")).parseTiff(data) : (await import("./image.ts")).parseImage(data, typeName));
}

// Each parser module is loaded on first use: importing this module stays cheap for code that only
// needs the type lists (the HTTP thread), and pdfjs, tesseract.js and the native canvas load only where
// documents are actually parsed. Nothing here may import them statically (terminateOcr is ocr.ts's own:
// re-exported here, it loaded tesseract.js and the canvas at every start, 0.1-1.3 s).
const PARSERS: Record<SupportedType, Parser> = {
  pdf: async (data) => (await import("./pdf.ts")).parsePdf(data),
  docx: async (data) => (await import("./docx.ts")).parseDocx(data),
  pptx: async (data) => (await import("./pptx.ts")).parsePptx(data),
  xlsx: async (data) => (await import("./xlsx.ts")).parseXlsx(data),
  png: image("PNG"),
  jpg: image("JPEG"),
  jpeg: image("JPEG"),
  webp: image("WEBP"),
  tiff: image("TIFF"),
  txt: async (data) => (await import("./txt.ts")).parseTxt(data),
  md: async (data) => (await import("./markdown.ts")).parseMarkdown(data),
  html: async (data) => (await import("./html.ts")).parseHtml(data),
  htm: async (data) => (await import("./html.ts")).parseHtml(data),
  csv: async (data) => (await import("./delimited.ts")).parseDelimited(data, "csv"),
  tsv: async (data) => (await import("./delimited.ts")).parseDelimited(data, "tsv"),
  json: async (data) => (await import("./json.ts")).parseJson(data),
};

/**
 * Extracts text, pages and headings from a document. `fileType` is the extension ("pdf", ".PDF").
 * Every failure is a ParseError whose message can be shown to the user; an unexpected library
 * failure is reported as unreadable, with the original error as `cause` for the logs.
 */
export async function parseDocument(fileType: string, data: Uint8Array, fileName: string): Promise<ParsedDocument> {
  const type = fileType.toLowerCase().replace(/^\./, "");
  if (!isSupportedType(type)) throw new ParseError(`Unsupported file type: ${fileType}`);
  try {
    return await PARSERS[type](data);
  } catch (error) {
    if (error instanceof ParseError) throw error;
    throw new ParseError(`Could not read ${fileName}: the ${type.toUpperCase()} file is damaged or unsupported`, { cause: error });
  }
}
