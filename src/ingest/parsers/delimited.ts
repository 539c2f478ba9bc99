import Papa from "papaparse";
import { SectionCollector } from "./section-collector.ts";
import { tableRowsToLines } from "./table-rows.ts";
import { decodeText } from "./text-decode.ts";
import type { ParsedDocument } from "./types.ts";

/** CSV/TSV: one line per row, each value labelled with its column header. */
export async function parseDelimited(data: Uint8Array, delimiter: "," | "\t"): Promise<ParsedDocument> {
  const { data: rows } = Papa.parse<string[]>(decodeText(data), { delimiter, skipEmptyLines: "greedy" });
  const collector = new SectionCollector();
  collector.addParagraph(tableRowsToLines(rows).join("\n"));
  return { pageCount: null, sections: collector.finish() };
}
