// The one module that imports pdfjs-dist, so its globals are always in place before it loads.
import "./pdfjs-globals.ts";
import { createCanvas, type Canvas } from "@napi-rs/canvas";
import { getDocument, VerbosityLevel, type PDFDocumentProxy } from "pdfjs-dist/legacy/build/pdf.mjs";
import { packageDir } from "../../runtime/package-dir.ts";
import { MAX_OCR_PIXELS } from "./ocr-raster.ts";
import { ParseError } from "./types.ts";

export { OPS, type PDFPageProxy } from "pdfjs-dist/legacy/build/pdf.mjs";

/**
 * Character maps (CJK text), standard fonts and the JPEG 2000 / JBIG2 decoders ship as files in
 * pdfjs-dist. Looked up on first use, not at import: in a compiled binary they exist only once
 * prepareRuntime has unpacked them.
 */
function pdfjsDataUrls() {
  const dir = packageDir("pdfjs-dist");
  return { cMapUrl: `${dir}/cmaps/`, standardFontDataUrl: `${dir}/standard_fonts/`, wasmUrl: `${dir}/wasm/` };
}

/** pdfjs's scratch canvases for rendering, from @napi-rs/canvas imported statically. */
class CanvasFactory {
  create(width: number, height: number) {
    const canvas = createCanvas(width, height);
    return { canvas, context: canvas.getContext("2d") };
  }

  reset(target: { canvas: Canvas }, width: number, height: number) {
    target.canvas.width = width;
    target.canvas.height = height;
  }

  destroy(target: { canvas: Canvas | null; context: unknown }) {
    if (target.canvas) target.canvas.width = target.canvas.height = 0;
    target.canvas = null;
    target.context = null;
  }
}

/**
 * A file with no "%PDF-" header anywhere is refused at once: pdfjs would tokenize the whole of it in search
 * of objects, and 30 MB of non-PDF bytes took over 960 MB of memory before it gave up. The header is looked
 * for in the whole file, not only in the first 1024 bytes as the format has it: pdfjs reads PDFs behind a
 * longer preamble (a print job's header), and so did Quarry.
 */
const HEADER = Buffer.from("%PDF-");

function hasPdfHeader(data: Uint8Array): boolean {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).includes(HEADER);
}

/** Opens a PDF; password-protected and unreadable files give a ParseError. */
export async function openPdf(data: Uint8Array): Promise<PDFDocumentProxy> {
  if (!hasPdfHeader(data)) throw new ParseError("Not a valid PDF file");
  const task = getDocument({
    data: data.slice(), // pdfjs takes ownership of the buffer it is given
    ...pdfjsDataUrls(),
    CanvasFactory,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    maxImageSize: MAX_OCR_PIXELS,
    verbosity: VerbosityLevel.ERRORS,
  });
  try {
    return await task.promise;
  } catch (error) {
    await task.destroy();
    if ((error as Error | undefined)?.name === "PasswordException") throw new ParseError("PDF is encrypted");
    throw new ParseError("Not a valid PDF file");
  }
}
