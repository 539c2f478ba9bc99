import { ParseError } from "./types.ts";

export const MAX_PAGES = 500;

/**
 * A .docx stores flowing text, not pages, so its pages are counted from the text: a page per this
 * many characters (the 2,400 bytes a text file is billed a page for, so the same text costs at
 * least as much as .docx as it does as .txt; a printed page of 11–12 pt prose holds 3,000–3,600).
 */
export const DOCX_CHARS_PER_PAGE = 2400;

/** The pages left of the account's monthly allowance when its document is parsed (limits on). */
export interface PageAllowance {
  left: number;
  limit: number;
}

/**
 * The allowance of the document being parsed: the parser process parses one document at a time and sets
 * it per request, so that a document that cannot fit fails as soon as its pages are counted, before OCR.
 */
let allowance: PageAllowance | null = null;

export function setPageAllowance(value: PageAllowance | null): void {
  allowance = value;
}

/** Why a document's pages cannot be counted against the allowance (here and when it is indexed). */
export function pagesOverrunMessage(pages: number, { left, limit }: PageAllowance): string {
  return (
    `Document has ${pages} ${pages === 1 ? "page" : "pages"} but only ${left} of the monthly allowance of ${limit} pages ${left === 1 ? "remains" : "remain"}. ` +
    "Upgrade your plan or wait for the next billing period; nothing was counted."
  );
}

/** Rejects documents with more pages (slides, sheets, frames) than we index or the allowance has left, before the per-page work. */
export function assertPageLimit(pageCount: number): void {
  if (pageCount > MAX_PAGES) throw new ParseError(`Document has ${pageCount} pages; the limit is ${MAX_PAGES}`, { pageCount });
  if (allowance && pageCount > allowance.left) throw new ParseError(pagesOverrunMessage(pageCount, allowance), { pageCount });
}
