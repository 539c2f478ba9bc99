import * as XLSX from "@e965/xlsx";
import { notValidMessage, openPackage } from "./ooxml-package.ts";
import { assertPageLimit } from "./page-limit.ts";
import { SectionCollector } from "./section-collector.ts";
import { sheetRowsToLines } from "./table-rows.ts";
import { ParseError, type ParsedDocument, type ParsedSection } from "./types.ts";

const INVALID = notValidMessage("XLSX");

/** Excel: one page per sheet, headed by the sheet name; rows as "Header: value; …" lines. */
export async function parseXlsx(data: Uint8Array): Promise<ParsedDocument> {
  // SheetJS reads almost any bytes as some spreadsheet format (even plain text): only accept a zip,
  // and only one within the decompression limits (SheetJS inflates every part it reads in full).
  await openPackage(data, "XLSX");
  let workbook: XLSX.WorkBook;
  try {
    workbook = XLSX.read(data, { type: "array", cellFormula: false, cellHTML: false, cellStyles: false, cellNF: true });
  } catch {
    throw new ParseError(INVALID);
  }
  if (workbook.SheetNames.length === 0) throw new ParseError(INVALID);
  assertPageLimit(workbook.SheetNames.length);

  const sections: ParsedSection[] = [];
  workbook.SheetNames.forEach((name, index) => {
    const sheet = workbook.Sheets[name];
    if (!sheet) return;
    spellOutNumbers(sheet, workbook.Workbook?.WBProps?.date1904 === true);
    const text = sheetRowsToLines(presentRows(sheet)).join("\n");
    // An empty sheet still counts as a page, but gives no section: its name alone is no content (a workbook
    // of empty sheets then fails as having no text, like an empty .docx).
    if (text.trim() === "") return;
    const collector = new SectionCollector({ sheet: name });
    collector.setPage(index + 1);
    collector.setHeading(name);
    collector.addParagraph(text);
    sections.push(...collector.finish());
  });
  return { pageCount: workbook.SheetNames.length, sections };
}

/**
 * Excel's built-in short date (format 14, and 22 with a time) is the reader's locale's: 1/1/2024 in the US.
 * SheetJS writes it m/d/yy, "1/1/24", which a search for 2024 does not find; its year is written whole.
 * A format the author chose (d/m/yy, yyyy-mm-dd) keeps what it shows.
 */
const SHORT_DATES: Record<string, string> = { "m/d/yy": "m/d/yyyy", "m/d/yy h:mm": "m/d/yyyy h:mm" };

/**
 * Number cells whose shown text would hide what a search looks for, in one pass over the sheet's cells:
 * - a number shown in scientific notation (General past 11 digits: 123456789012 as "1.23457E+11", a number in
 *   a Text column, a scientific format): an order number, account or phone number would be indexed without
 *   its digits, and found by none of them; its text becomes its full value, whatever its format;
 * - a built-in short date, its year written whole (SHORT_DATES), counting from 1904 where the workbook does.
 * Every other cell keeps what Excel shows.
 */
function spellOutNumbers(sheet: XLSX.WorkSheet, date1904: boolean): void {
  for (const [address, cell] of Object.entries(sheet)) {
    if (address.startsWith("!")) continue;
    const { t, v, w, z } = cell as XLSX.CellObject;
    if (t !== "n" || typeof v !== "number") continue;
    const wholeYear = typeof z === "string" ? SHORT_DATES[z] : undefined;
    if (/E[+-]\d/i.test(w ?? "")) (cell as XLSX.CellObject).w = String(v);
    else if (wholeYear) (cell as XLSX.CellObject).w = XLSX.SSF.format(wholeYear, v, { date1904 });
  }
}

/**
 * The sheet's rows as Excel displays their cells (number formats, dates), from the cells it holds: a row
 * holding none is left out, a missing cell is a hole. SheetJS's sheet_to_json walks the declared range
 * instead, every cell of it: a 1.8 KB file declaring A1:XFD1048576 (or holding cells at A1 and XFD1048576)
 * kept a parser busy for the 45-minute limit. Columns count from the leftmost column that holds a cell.
 */
function presentRows(sheet: XLSX.WorkSheet): unknown[][] {
  const byRow = new Map<number, [number, string][]>();
  let firstColumn = Infinity;
  for (const [address, cell] of Object.entries(sheet)) {
    if (address.startsWith("!")) continue;
    const { r, c } = XLSX.utils.decode_cell(address);
    const cells = byRow.get(r) ?? [];
    cells.push([c, XLSX.utils.format_cell(cell as XLSX.CellObject)]);
    byRow.set(r, cells);
    firstColumn = Math.min(firstColumn, c);
  }
  return [...byRow.keys()]
    .sort((a, b) => a - b)
    .map((r) => {
      const row: unknown[] = [];
      for (const [c, text] of byRow.get(r)!) row[c - firstColumn] = text;
      return row;
    });
}
