import { ParseError } from "./types.ts";

export const MAX_PAGES = 500;

/**
 * A .docx stores flowing text, not pages, so its pages are counted from the text: a page per this
 * many characters (the 2,400 bytes a text file is billed a page for, so the same text costs at
 * least as much as .docx as it does as .txt; a printed page of 11–12 pt prose holds 3,000–3,600).
 */
export const DOCX_CHARS_PER_PAGE = 2400;

/** Rejects documents with more pages (slides, sheets, frames) than we index, before the per-page work. */
export function assertPageLimit(pageCount: number): void {
  if (pageCount > MAX_PAGES) throw new ParseError(`Document has ${pageCount} pages; the limit is ${MAX_PAGES}`, { pageCount });
}
