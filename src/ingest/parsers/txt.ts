import { SectionCollector } from "./section-collector.ts";
import { decodeText } from "./text-decode.ts";
import { unwrapParagraphs } from "./text-cleanup.ts";
import type { ParsedDocument } from "./types.ts";

/** Plain text: blank lines separate paragraphs; hard-wrapped lines inside a paragraph are joined. */
export async function parseTxt(data: Uint8Array): Promise<ParsedDocument> {
  const collector = new SectionCollector();
  for (const paragraph of unwrapParagraphs(decodeText(data))) collector.addParagraph(paragraph);
  return { pageCount: null, sections: collector.finish() };
}
