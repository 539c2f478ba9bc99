import Papa from "papaparse";
import { SectionCollector } from "./section-collector.ts";
import { tableRowsToLines } from "./table-rows.ts";
import { decodeText } from "./text-decode.ts";
import type { ParsedDocument } from "./types.ts";

/**
 * What a .csv file's values may be separated by, guessed by papaparse from the rows (the one giving
 * them a consistent number of fields): spreadsheets in much of Europe write ";" (a comma being their
 * decimal mark), and some exports write tabs or "|".
 */
const CSV_DELIMITERS = [",", ";", "\t", "|"];

/** CSV/TSV: one line per row, each value labelled with its column header. */
export async function parseDelimited(data: Uint8Array, type: "csv" | "tsv"): Promise<ParsedDocument> {
  const { data: rows } = Papa.parse<string[]>(decodeText(data), {
    ...(type === "tsv" ? { delimiter: "\t" } : { delimiter: "", delimitersToGuess: CSV_DELIMITERS }),
    skipEmptyLines: "greedy",
  });
  const collector = new SectionCollector();
  collector.addParagraph(tableRowsToLines(rows).join("\n"));
  return { pageCount: null, sections: collector.finish() };
}
