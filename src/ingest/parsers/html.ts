import { htmlToSections } from "./html-sections.ts";
import { decodeText } from "./text-decode.ts";
import type { ParsedDocument } from "./types.ts";

export async function parseHtml(data: Uint8Array): Promise<ParsedDocument> {
  return { pageCount: null, sections: htmlToSections(decodeText(data)) };
}
