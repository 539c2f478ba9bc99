import { cleanLine } from "./text-cleanup.ts";

/** A value that reads as a number (digits, a sign, separators, a decimal point or percent): data, not a column name. */
const NUMBER = /^[-+]?[\d.,\s']*\d[\d.,\s']*%?$/;

/**
 * Table rows → text lines that keep each value next to its column name, e.g.
 * "Name: Jane Smith; Age: 37". The first row with any content is the header, unless every value in it
 * is a number (a table without a header row: its first row is data); empty cells are left out; a
 * column without a header name is called "Column N".
 */
export function tableRowsToLines(rows: unknown[][]): string[] {
  const nonEmpty = rows.filter((row) => row.some((cell) => cellText(cell) !== ""));
  const headed = nonEmpty.length < 2 || !nonEmpty[0]!.every((cell) => cellText(cell) === "" || NUMBER.test(cellText(cell)));
  const [header = [], ...body] = headed ? nonEmpty : [[], ...nonEmpty];
  const names = header.map((cell, index) => cellText(cell) || `Column ${index + 1}`);
  const lines: string[] = [];
  for (const row of body) {
    const parts: string[] = [];
    row.forEach((cell, index) => {
      const value = cellText(cell);
      if (value !== "") parts.push(`${names[index] ?? `Column ${index + 1}`}: ${value}`);
    });
    lines.push(parts.join("; "));
  }
  // A table with a header row only still has searchable text.
  return lines.length > 0 ? lines : names.length > 0 ? [names.join("; ")] : [];
}

function cellText(cell: unknown): string {
  return cell === null || cell === undefined ? "" : cleanLine(String(cell));
}
