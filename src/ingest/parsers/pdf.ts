import { createCanvas } from "@napi-rs/canvas";
import { PageOrientation, recognizeText } from "./ocr.ts";
import { MAX_OCR_PIXELS } from "./ocr-raster.ts";
import { assertPageLimit } from "./page-limit.ts";
import { bodyFontSize, linesToBlocks, runsToLines, withoutRunningLines, type PdfLine } from "./pdf-layout.ts";
import { openPdf, OPS, type PDFPageProxy } from "./pdfjs.ts";
import { SectionCollector } from "./section-collector.ts";
import { asParseError, type ParsedDocument } from "./types.ts";
import { unwrapParagraphs } from "./text-cleanup.ts";

/** A page with less text than this that paints an image is treated as scanned and read by OCR. */
const SCANNED_PAGE_MAX_CHARS = 16;
/**
 * What pdfjs makes of glyphs it has no Unicode for (a font without a ToUnicode map): control characters,
 * private-use ones or U+FFFD. A page with more of them than real characters is read by OCR as well.
 */
const UNMAPPED = /(?![\t\n\v\f\r])[\p{Cc}\p{Co}\uFFFD]/gu;
const OCR_DPI = 200;
const OCR_MAX_SIDE = 3000;
const IMAGE_OPS = new Set(Object.entries(OPS).filter(([name]) => /^paint.*Image/.test(name)).map(([, op]) => op));

type PageContent = { lines: PdfLine[] } | { ocrText: string };

export async function parsePdf(data: Uint8Array): Promise<ParsedDocument> {
  const pdf = await openPdf(data);
  try {
    assertPageLimit(pdf.numPages);
    const read: PageContent[] = [];
    const orientation = new PageOrientation();
    for (let number = 1; number <= pdf.numPages; number++) read.push(await readPage(pdf.getPage(number), orientation));
    const keptLines = withoutRunningLines(read.flatMap((page) => ("lines" in page ? [page.lines] : [])));
    let next = 0;
    const pages = read.map((page) => ("lines" in page ? { lines: keptLines[next++]! } : page));

    const bodySize = bodyFontSize(keptLines);
    const collector = new SectionCollector();
    pages.forEach((page, index) => {
      collector.setPage(index + 1);
      if ("ocrText" in page) {
        for (const paragraph of unwrapParagraphs(page.ocrText)) collector.addParagraph(paragraph);
        return;
      }
      for (const block of linesToBlocks(page.lines, bodySize)) {
        if (block.kind === "heading") collector.setHeading(block.text);
        else collector.addParagraph(block.text);
      }
    });
    return { pageCount: pdf.numPages, sections: collector.finish() };
  } catch (error) {
    throw asParseError(error, "Not a valid PDF file");
  } finally {
    await pdf.destroy();
  }
}

async function readPage(pagePromise: Promise<PDFPageProxy>, orientation: PageOrientation): Promise<PageContent> {
  const page = await pagePromise;
  try {
    const lines = runsToLines((await page.getTextContent()).items);
    const text = lines.map((line) => line.text).join("");
    const unmapped = text.match(UNMAPPED)?.length ?? 0;
    const chars = text.replace(/\s/g, "").length - unmapped;
    if (unmapped <= chars && (chars >= SCANNED_PAGE_MAX_CHARS || !(await paintsImages(page)))) return { lines };
    return { ocrText: await recognizeText(await renderPng(page), orientation) };
  } finally {
    page.cleanup();
  }
}

async function paintsImages(page: PDFPageProxy): Promise<boolean> {
  const { fnArray } = await page.getOperatorList();
  return fnArray.some((op) => IMAGE_OPS.has(op));
}

async function renderPng(page: PDFPageProxy): Promise<Buffer> {
  const { width, height } = page.getViewport({ scale: 1 });
  const scale = Math.min(OCR_DPI / 72, OCR_MAX_SIDE / Math.max(width, height), Math.sqrt(MAX_OCR_PIXELS / (width * height)));
  const viewport = page.getViewport({ scale });
  const canvas = createCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height));
  const context = canvas.getContext("2d");
  await page.render({ canvas: canvas as never, canvasContext: context as never, viewport, background: "#ffffff" }).promise;
  return canvas.encode("png");
}
