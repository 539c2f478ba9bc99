import { ParseError } from "./types.ts";

export const MAX_PAGES = 500;

/** Rejects documents with more pages (slides, sheets, frames) than we index, before the per-page work. */
export function assertPageLimit(pageCount: number): void {
  if (pageCount > MAX_PAGES) throw new ParseError(`Document has ${pageCount} pages; the limit is ${MAX_PAGES}`, { pageCount });
}
