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
/** A character no text holds (decodeText refuses NUL bytes), standing for "no quoting". */
const NO_QUOTES = "\u0000";

function parseRows(text: string, delimiter: Papa.ParseConfig["delimiter"], quoteChar = '"'): Papa.ParseResult<string[]> {
  const guess = delimiter === "" ? { delimitersToGuess: CSV_DELIMITERS } : {};
  return Papa.parse<string[]>(text, { delimiter, ...guess, quoteChar, skipEmptyLines: "greedy" });
}

/** CSV/TSV: one line per row, each value labelled with its column header. */
export async function parseDelimited(data: Uint8Array, type: "csv" | "tsv"): Promise<ParsedDocument> {
  const text = decodeText(data);
  const delimiter = type === "tsv" ? "\t" : "";
  let result = parseRows(text, delimiter);
  // A quote that opens no quoted field (a title written "Heat" (film), as Google Sheets' TSV has them) is read
  // as opening one, which runs on to the next quote or the end of the file, rows and all. A file with quote
  // errors is read with its quotes as plain text when that leaves fewer rows at odds with its header, or as
  // few and more rows (rows were swallowed). A file whose other fields are quoted properly (a field over two
  // lines, "" inside) stays read with quotes: as plain text, each field over two lines would misfit.
  if (result.errors.some((error) => error.type === "Quotes")) {
    const plain = parseRows(text, delimiter, NO_QUOTES);
    const [quotedMisfits, plainMisfits] = [rowsMisfitting(result.data), rowsMisfitting(plain.data)];
    if (plainMisfits < quotedMisfits || (plainMisfits === quotedMisfits && plain.data.length > result.data.length)) {
      result = plain;
    }
  }
  const collector = new SectionCollector();
  collector.addParagraph(tableRowsToLines(result.data).join("\n"));
  return { pageCount: null, sections: collector.finish() };
}

/** Rows after the first without as many fields as it has. */
function rowsMisfitting([header, ...rows]: string[][]): number {
  return rows.filter((row) => row.length !== header?.length).length;
}
