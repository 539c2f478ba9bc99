// The supported extensions, in a module of their own so that code which only validates uploads
// does not load the parsers (pdfjs, tesseract.js, native canvas).

/** Formats with pages (pdf pages, slides, sheets, image frames). */
export const RICH_TYPES = ["pdf", "docx", "pptx", "xlsx", "png", "jpg", "jpeg", "webp", "tiff"] as const;
/** Formats without pages: pageCount and every section's page are null. */
export const TEXT_TYPES = ["txt", "md", "html", "htm", "csv", "tsv", "json"] as const;
export const SUPPORTED_TYPES = [...RICH_TYPES, ...TEXT_TYPES] as const;
export type SupportedType = (typeof SUPPORTED_TYPES)[number];

export function isSupportedType(fileType: string): fileType is SupportedType {
  return (SUPPORTED_TYPES as readonly string[]).includes(fileType);
}
