import { createCanvas, type Canvas } from "@napi-rs/canvas";
import { PageOrientation, recognizeText } from "./ocr.ts";
import { MAX_OCR_PIXELS } from "./ocr-raster.ts";
import { assertPageLimit } from "./page-limit.ts";
import { bodyFontSize, hyphenatedWords, linesToBlocks, runsToLines, withoutRunningLines, type PdfBlock, type PdfLine } from "./pdf-layout.ts";
import { openPdf, OPS, type PDFPageProxy } from "./pdfjs.ts";
import { areaOf, unmappedFonts, visibleCharacters, worthReading, type FontRun } from "./pdf-unmapped-fonts.ts";
import { SectionCollector } from "./section-collector.ts";
import { asParseError, type ParsedDocument } from "./types.ts";
import { unwrapParagraphs } from "./text-cleanup.ts";

/**
 * A page with less text than this that paints an image is treated as scanned and read by OCR; so is a
 * page with more characters in unmapped fonts (pdf-unmapped-fonts.ts) than in mapped ones.
 */
const SCANNED_PAGE_MAX_CHARS = 16;
const OCR_DPI = 200;
/** The area of unmapped text is read at a finer scale: it is often a figure's small print (react_paper.pdf's Figure 4: 200 dpi dropped half its lines). */
const AREA_OCR_DPI = 300;
const OCR_MAX_SIDE = 3000;
const IMAGE_OPS = new Set(Object.entries(OPS).filter(([name]) => /^paint.*Image/.test(name)).map(([, op]) => op));

/** A page's text layer (with what OCR read where its fonts have no Unicode map), or OCR's reading of the page. */
type PageContent = { lines: PdfLine[]; areaText: string } | { ocrText: string };
/** What a page whose content cannot be read (a damaged content stream) gives: nothing, the other pages still count. */
const UNREADABLE_PAGE: PageContent = { lines: [], areaText: "" };

export async function parsePdf(data: Uint8Array): Promise<ParsedDocument> {
  const pdf = await openPdf(data);
  try {
    assertPageLimit(pdf.numPages);
    const read: PageContent[] = [];
    const orientation = new PageOrientation();
    for (let number = 1; number <= pdf.numPages; number++) read.push(await readPage(pdf.getPage(number), orientation));
    if (read.every((page) => page === UNREADABLE_PAGE)) throw new Error("no page could be read");
    const keptLines = withoutRunningLines(read.flatMap((page) => ("lines" in page ? [page.lines] : [])));
    let next = 0;
    const pages = read.map((page) => ("lines" in page ? { ...page, lines: keptLines[next++]! } : page));

    const bodySize = bodyFontSize(keptLines);
    const hyphenated = hyphenatedWords(keptLines);
    const collector = new SectionCollector();
    let lastBlock: PdfBlock | undefined; // of the page before, when its text ended with it
    pages.forEach((page, index) => {
      if ("ocrText" in page) {
        collector.setPage(index + 1);
        for (const paragraph of unwrapParagraphs(page.ocrText)) collector.addParagraph(paragraph);
        lastBlock = undefined;
        return;
      }
      const blocks = linesToBlocks(page.lines, bodySize, hyphenated);
      collector.setPage(index + 1, runsOver(lastBlock, blocks[0], bodySize));
      for (const block of blocks) {
        if (block.kind === "heading") collector.setHeading(block.text);
        else collector.addParagraph(block.text);
      }
      const area = unwrapParagraphs(page.areaText);
      for (const paragraph of area) collector.addParagraph(paragraph);
      lastBlock = area.length > 0 ? undefined : blocks.at(-1);
    });
    return { pageCount: pdf.numPages, sections: collector.finish() };
  } catch (error) {
    throw asParseError(error, "Not a valid PDF file");
  } finally {
    await pdf.destroy();
  }
}

/**
 * One page's content. A page pdf.js cannot read (its content stream damaged: "Bad encoding in flate stream")
 * is UNREADABLE_PAGE, so that one bad page does not fail a document whose other pages read well.
 */
async function readPage(pagePromise: Promise<PDFPageProxy>, orientation: PageOrientation): Promise<PageContent> {
  // A page that cannot be loaded at all (a broken page tree) still fails the document: pdf.js then counts
  // only the pages before it, and the ones after would be lost without a word.
  const page = await pagePromise;
  try {
    const runs = await page.getTextContent().then(
      (content) => content.items.filter((item) => "str" in item) as FontRun[],
      () => null,
    );
    if (!runs) return UNREADABLE_PAGE;
    const unmappedIn = unmappedFonts(runs);
    const [mapped, unmapped] = [runs.filter((run) => !unmappedIn.has(run.fontName)), runs.filter((run) => unmappedIn.has(run.fontName))];
    const chars = visibleCharacters(mapped);
    const unmappedChars = visibleCharacters(unmapped);
    const scanned = unmappedChars > chars || (chars < SCANNED_PAGE_MAX_CHARS && (await paintsImages(page)));
    if (scanned === null) return UNREADABLE_PAGE;
    if (scanned) return { ocrText: await recognizeText(await (await renderPage(page, OCR_DPI)).encode("png"), orientation) };
    const areaText = worthReading(unmapped) ? await recognizeText(await (await renderPage(page, AREA_OCR_DPI, areaOf(unmapped))).encode("png")) : "";
    return { lines: runsToLines(mapped), areaText };
  } finally {
    page.cleanup();
  }
}

/** Whether the page paints an image; null when its operators cannot be read (a damaged content stream). */
async function paintsImages(page: PDFPageProxy): Promise<boolean | null> {
  return page.getOperatorList().then(
    ({ fnArray }) => fnArray.some((op) => IMAGE_OPS.has(op)),
    () => null,
  );
}

/** The page drawn for OCR, or only the area [x0, y0, x1, y1] of it (PDF coordinates). */
async function renderPage(page: PDFPageProxy, dpi: number, area?: [number, number, number, number]): Promise<Canvas> {
  const { width, height } = page.getViewport({ scale: 1 });
  const scale = Math.min(dpi / 72, OCR_MAX_SIDE / Math.max(width, height), Math.sqrt(MAX_OCR_PIXELS / (width * height)));
  const viewport = page.getViewport({ scale });
  const canvas = createCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height));
  const context = canvas.getContext("2d");
  await page.render({ canvas: canvas as never, canvasContext: context as never, viewport, background: "#ffffff" }).promise;
  if (!area) return canvas;
  const [ax0, ay0, ax1, ay1] = viewport.convertToViewportRectangle(area);
  const left = Math.max(0, Math.floor(Math.min(ax0, ax1)));
  const top = Math.max(0, Math.floor(Math.min(ay0, ay1)));
  const cropWidth = Math.min(canvas.width, Math.ceil(Math.max(ax0, ax1))) - left;
  const cropHeight = Math.min(canvas.height, Math.ceil(Math.max(ay0, ay1))) - top;
  const crop = createCanvas(Math.max(1, cropWidth), Math.max(1, cropHeight));
  crop.getContext("2d").drawImage(canvas, left, top, cropWidth, cropHeight, 0, 0, cropWidth, cropHeight);
  return crop;
}

/**
 * Whether a page's first block goes on with the paragraph the page before ended with: body text on both sides
 * (not a footnote, a caption or a footer, which often end a page), the one ending mid-sentence (on a letter or
 * a comma; a table's or a footer's last number is not a sentence's) and the other starting with a lower-case
 * word, as "thoughts only need to" and "appear sparsely in…" over a page break (a lone letter may be a figure's
 * label). Joined, the sentence is not read as two paragraphs.
 */
function runsOver(before: PdfBlock | undefined, first: PdfBlock | undefined, bodySize: number): boolean {
  const body = (block: PdfBlock | undefined): block is PdfBlock => block?.kind === "paragraph" && Math.abs(block.size - bodySize) <= 1;
  return body(before) && body(first) && !CAPTION.test(before.text) && /[\p{L},]$/u.test(before.text) && /^(?:\p{Ll}{2}|a\s)/u.test(first.text);
}

/**
 * A figure's or a table's caption, which may be set at the body's size: its number (3, 3.2, 3a) then a colon, a
 * full stop or a dash, or a capitalized word ("Figure 3: …", "Fig. 3. …", "Table 2 – …", Springer's "Fig. 4
 * Schematic …"), where a paragraph of text goes on in lower case ("Figure 3.2 shows…").
 */
const CAPTION = /^(?:[Ff]ig(?:ure)?|FIG(?:URE)?|[Tt]ab(?:le)?|TABLE)\.?\s*\d+(?:\.\d+)*[a-z]?(?:\s*[:.|–—-](?!\d)|\s+\p{Lu})/u;
