// What every parser produces: text in reading order, tagged with page and heading.

export interface ParsedSection {
  /**
   * Paragraphs separated by blank lines; single newlines are meaningful line breaks (table rows,
   * list items). Empty for a heading that has no text of its own before the next heading.
   */
  text: string;
  /** 1-based page (pdf page, slide, sheet, image frame); null for text-only formats. */
  page: number | null;
  /** Heading the text belongs to ("" when none). */
  heading: string;
  /** Extra chunk-level metadata, e.g. { sheet: "Q1" } or { slide: 3 }. */
  meta?: Record<string, unknown>;
  /** Its first paragraph goes on with the last one before it: a sentence running over a page break. */
  continuesParagraph?: true;
}

export interface ParsedDocument {
  /** Set for rich formats (pdf, docx, pptx, xlsx, images); null for text formats. */
  pageCount: number | null;
  sections: ParsedSection[];
}

/** A parse failure whose message is safe and useful to show the user as error_detail. */
export class ParseError extends Error {
  override name = "ParseError";
  /** The document's page count when the failure is about it (over the page limit); kept on the failed document. */
  readonly pageCount: number | null;

  constructor(message: string, options?: ErrorOptions & { pageCount?: number }) {
    super(message, options);
    this.pageCount = options?.pageCount ?? null;
  }
}

/** `error` if it already is a ParseError, otherwise a ParseError with `message` (a library failure on bad input). */
export function asParseError(error: unknown, message: string): ParseError {
  return error instanceof ParseError ? error : new ParseError(message);
}
