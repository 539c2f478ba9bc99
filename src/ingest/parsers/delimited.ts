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
/** Characters no text holds (decodeText refuses NUL bytes), standing for "no quoting" and "no delimiter". */
const NO_QUOTES = "\u0000";
const NO_DELIMITER = "\u0001";

function parseRows(text: string, delimiter: Papa.ParseConfig["delimiter"], quoteChar = '"'): Papa.ParseResult<string[]> {
  const guess = delimiter === "" ? { delimitersToGuess: CSV_DELIMITERS } : {};
  return Papa.parse<string[]>(text, { delimiter, ...guess, quoteChar, skipEmptyLines: "greedy" });
}

/** CSV/TSV: one line per row, each value labelled with its column header. */
export async function parseDelimited(data: Uint8Array, type: "csv" | "tsv"): Promise<ParsedDocument> {
  const text = decodeText(data);
  const delimiter = type === "tsv" ? "\t" : "";
  let result = parseRows(text, delimiter);
  let quoteChar = '"';
  // A quote that opens no quoted field (a title written "Heat" (film), as TSV exports have them) is read as
  // opening one that is never closed, and the rest of the file becomes that field. Such a file is read with
  // its quotes as plain text when more of its rows then fit its header. A stray quote that is closed further
  // on, in a file whose other fields are quoted properly (a field over two lines, "" inside), leaves it
  // read with quotes: as plain text, every field over two lines would fall apart.
  if (result.errors.some((error) => error.code === "MissingQuotes")) {
    const plain = parseRows(text, delimiter, NO_QUOTES);
    if (rowsFittingHeader(plain.data) > rowsFittingHeader(result.data)) [result, quoteChar] = [plain, NO_QUOTES];
  }
  // A header of one field names one column: the ";" or "|" in its values were taken for a delimiter.
  const [header, ...rows] = result.data;
  if (type === "csv" && header?.length === 1 && rows.some((row) => row.length > 1)) result = parseRows(text, NO_DELIMITER, quoteChar);
  const collector = new SectionCollector();
  collector.addParagraph(tableRowsToLines(result.data).join("\n"));
  return { pageCount: null, sections: collector.finish() };
}

/** Rows after the first with as many fields as it has. */
function rowsFittingHeader([header, ...rows]: string[][]): number {
  return rows.filter((row) => row.length === header?.length).length;
}
