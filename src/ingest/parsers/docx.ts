import { DomUtils } from "htmlparser2";
import mammoth from "mammoth";
import { htmlToSections } from "./html-sections.ts";
import { elementsNamed, openPackage, readXmlPart } from "./ooxml-package.ts";
import { assertPageLimit } from "./page-limit.ts";
import { ParseError, type ParsedDocument, type ParsedSection } from "./types.ts";

const INVALID = "Not a valid DOCX file";
/** Page size used to estimate pages when the file does not record a page count. */
const WORDS_PER_PAGE = 500;

// Images are dropped: they carry no text and mammoth would otherwise inline them as base64.
const skipImages = mammoth.images.imgElement(async () => ({ src: "" }));

/** Word documents via mammoth's HTML, so Word's Heading 1–6 styles become section headings. */
export async function parseDocx(data: Uint8Array): Promise<ParsedDocument> {
  const zip = await openPackage(data, INVALID);
  if (!zip.file("word/document.xml")) throw new ParseError(INVALID);
  let html: string;
  try {
    ({ value: html } = await mammoth.convertToHtml({ buffer: Buffer.from(data) }, { convertImage: skipImages }));
  } catch {
    throw new ParseError(INVALID);
  }
  const sections = htmlToSections(html);
  const totalWords = sections.reduce((sum, section) => sum + countWords(section.text), 0);
  const appXml = await readXmlPart(zip, "docProps/app.xml").catch(() => null);
  const recordedPages = Number(appXml ? DomUtils.textContent(elementsNamed(appXml, "Pages")) : NaN);
  // <Pages> is what Word counted when it last saved; files written by other tools often lack it,
  // and then we estimate from the word count.
  const pageCount = recordedPages >= 1 ? Math.floor(recordedPages) : Math.max(1, Math.ceil(totalWords / WORDS_PER_PAGE));
  assertPageLimit(pageCount);
  return { pageCount, sections: paginateByWords(sections, pageCount, totalWords) };
}

/**
 * A .docx stores flowing text, not laid-out pages, so page numbers are estimated: each paragraph
 * is put on the page its first word falls on when the words are spread evenly over the pages.
 */
function paginateByWords(sections: ParsedSection[], pageCount: number, totalWords: number): ParsedSection[] {
  const wordsPerPage = Math.max(1, totalWords / pageCount);
  const paged: ParsedSection[] = [];
  let offset = 0;
  for (const section of sections) {
    let current: ParsedSection | null = null;
    const paragraphs = section.text === "" ? [""] : section.text.split("\n\n");
    for (const paragraph of paragraphs) {
      const page = Math.min(pageCount, Math.floor(offset / wordsPerPage) + 1);
      offset += countWords(paragraph);
      if (current && current.page === page) {
        current.text += `\n\n${paragraph}`;
        continue;
      }
      current = { text: paragraph, page, heading: section.heading };
      paged.push(current);
    }
  }
  return paged;
}

function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}
