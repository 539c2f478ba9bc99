import { DomUtils, Parser } from "htmlparser2";
import mammoth from "mammoth";
import { htmlToSections } from "./html-sections.ts";
import { readableBody } from "./docx-body.ts";
import { elementsNamed, localNameOf, notValidMessage, openPackage, readXmlPart } from "./ooxml-package.ts";
import { DOCX_CHARS_PER_PAGE, assertPageLimit } from "./page-limit.ts";
import { cleanLine } from "./text-cleanup.ts";
import { ParseError, type ParsedDocument, type ParsedSection } from "./types.ts";

const INVALID = notValidMessage("DOCX");
const DOCUMENT_PART = "word/document.xml";

// Images are dropped: they carry no text and mammoth would otherwise inline them as base64.
const skipImages = mammoth.images.imgElement(async () => ({ src: "" }));
// A page or column break inside a paragraph is a line break: mammoth drops them by default, which
// joined the words on either side into one ("tail" + page break + "head" read "tailhead").
const BREAKS_AS_LINES = ["br[type='page'] => br", "br[type='column'] => br"];
/** The link mammoth puts after each footnote and endnote, back to where it is referenced: an arrow, no text. */
const NOTE_BACK_LINK = /<a href="#[^"]*-ref-[^"]*">↑<\/a>/g;

/** Word documents via mammoth's HTML, so Word's Heading 1–6 styles become section headings. */
export async function parseDocx(data: Uint8Array): Promise<ParsedDocument> {
  const zip = await openPackage(data, "DOCX");
  const documentPart = zip.file(DOCUMENT_PART);
  if (!documentPart) throw new ParseError(INVALID);
  const documentXml = await documentPart.async("string");
  const readable = readableBody(documentXml);
  let html: string;
  try {
    // Rewritten, the package is stored again (not compressed: only mammoth reads it).
    if (readable !== null) zip.file(DOCUMENT_PART, readable);
    const buffer = readable === null ? Buffer.from(data) : await zip.generateAsync({ type: "nodebuffer", compression: "STORE" });
    ({ value: html } = await mammoth.convertToHtml({ buffer }, { convertImage: skipImages, styleMap: BREAKS_AS_LINES }));
  } catch {
    throw new ParseError(INVALID);
  }
  const sections = htmlToSections(html.replace(NOTE_BACK_LINK, ""));
  const appXml = await readXmlPart(zip, "docProps/app.xml").catch(() => null);
  const recordedPages = Number(appXml ? DomUtils.textContent(elementsNamed(appXml, "Pages")) : NaN);
  // <Pages> in docProps is whatever the writing program (or anyone) put there, so it can raise the
  // count (Word's layout of tables, images and large type takes more room than text alone) but
  // never lower it below the count from the content.
  const runs = pageRuns(readable ?? documentXml);
  const contentPages = runs.reduce((sum, run) => sum + run.pages, 0);
  const pageCount = recordedPages > contentPages ? Math.floor(recordedPages) : contentPages;
  assertPageLimit(pageCount);
  return { pageCount, sections: paginate(sections, pageStarts(runs, pageCount - contentPages)) };
}

/**
 * Characters other than white space, spelled as the sections spell them (cleanLine: ligatures spelled
 * out, invisible characters dropped): what the body's text and mammoth's HTML of it have alike.
 */
function visibleLength(text: string): number {
  return cleanLine(text).replace(/\s+/g, "").length;
}

/**
 * Where each page starts, as an offset in the body's visible characters. Page breaks are hard
 * boundaries; within a run between two breaks the pages share its text evenly. `extraPages` (the
 * recorded count above the content's) go to the runs in proportion to their text.
 */
function pageStarts(runs: PageRun[], extraPages: number): number[] {
  const total = runs.reduce((sum, run) => sum + run.visible, 0) || 1;
  const starts: number[] = [];
  let offset = 0;
  let given = 0;
  let textBefore = 0;
  for (const run of runs) {
    textBefore += run.visible;
    // Cumulative rounding hands out exactly extraPages in all, each run its share of the text.
    const extra = Math.round((extraPages * textBefore) / total) - given;
    given += extra;
    const pages = run.pages + extra;
    for (let page = 0; page < pages; page++) starts.push(offset + (run.visible * page) / pages);
    offset += run.visible;
  }
  return starts;
}

/**
 * A .docx stores flowing text, not laid-out pages, so each line (a paragraph, or a part of one between
 * line, page or column breaks) is put on the page its first character falls on (pageStarts), mammoth's
 * text being the body's in the same order.
 */
function paginate(sections: ParsedSection[], starts: number[]): ParsedSection[] {
  const paged: ParsedSection[] = [];
  let offset = 0;
  let page = 1;
  for (const section of sections) {
    // Each heading starts a section (html-sections.ts) and stands before its text in the body.
    offset += visibleLength(section.heading);
    let current: ParsedSection | null = null;
    const paragraphs = section.text === "" ? [""] : section.text.split("\n\n");
    for (const paragraph of paragraphs) {
      let separator = "\n\n";
      for (const line of paragraph.split("\n")) {
        while (page < starts.length && starts[page] <= offset) page++;
        offset += visibleLength(line);
        if (current && current.page === page) current.text += separator + line;
        else {
          current = { text: line, page, heading: section.heading };
          paged.push(current);
        }
        separator = "\n";
      }
    }
  }
  return paged;
}

/** The text between two page breaks: its visible characters and the pages it fills. */
interface PageRun {
  visible: number;
  pages: number;
}

/**
 * Pages from the document body: explicit page breaks (<w:br w:type="page"/>, pageBreakBefore) and
 * section breaks other than continuous ones split the text into runs of pages, and each run takes
 * one page per DOCX_CHARS_PER_PAGE characters of text, at least one. A section break sits in the
 * properties of its section's last paragraph, ahead of that paragraph's text. (A section break's kind is stored
 * with the section that follows it; reading it off the section that ends is exact whenever a
 * document uses one kind of break, and the text estimate bounds the error otherwise.)
 */
function pageRuns(documentXml: string): PageRun[] {
  const runs: PageRun[] = [];
  let chars = 0;
  let visible = 0;
  let inText = false;
  /** Inside an mc:Choice, whose text mammoth skips for its mc:Fallback's (a text box is written in both). */
  let choiceDepth = 0;
  let inParagraphProperties = false;
  let paragraphSection: { continuous: boolean } | null = null;
  /** A section break in a paragraph's properties ends its section after that paragraph's own text. */
  let breakAfterParagraph = false;
  const breakPage = () => {
    runs.push({ visible, pages: Math.max(1, Math.ceil(chars / DOCX_CHARS_PER_PAGE)) });
    chars = 0;
    visible = 0;
  };
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        const value = (attribute: string) => Object.entries(attribs).find(([key]) => localNameOf(key) === attribute)?.[1];
        switch (localNameOf(name)) {
          case "t":
            inText = true;
            break;
          case "Choice":
            choiceDepth++;
            break;
          case "br":
            if (value("type") === "page") breakPage();
            break;
          case "pageBreakBefore":
            if (!["0", "false", "off"].includes(value("val") ?? "")) breakPage();
            break;
          case "pPr":
            inParagraphProperties = true;
            break;
          case "sectPr":
            if (inParagraphProperties) paragraphSection = { continuous: false };
            break;
          case "type":
            if (paragraphSection) paragraphSection.continuous = value("val") === "continuous";
        }
      },
      ontext(text) {
        if (!inText || choiceDepth > 0) return;
        chars += text.length;
        visible += visibleLength(text);
      },
      onclosetag(name) {
        const local = localNameOf(name);
        if (local === "t") inText = false;
        else if (local === "Choice") choiceDepth--;
        else if (local === "pPr") inParagraphProperties = false;
        else if (local === "sectPr" && paragraphSection) {
          breakAfterParagraph = !paragraphSection.continuous;
          paragraphSection = null;
        } else if (local === "p" && breakAfterParagraph) {
          breakAfterParagraph = false;
          breakPage();
        }
      },
    },
    { xmlMode: true },
  );
  parser.end(documentXml);
  breakPage();
  return runs;
}
