import { cleanLine } from "./text-cleanup.ts";

/**
 * Table rows → text lines that keep each value next to its column name, e.g.
 * "Name: Jane Smith; Age: 37". The first row with any content is the header; empty cells are
 * left out; a column without a header name is called "Column N".
 */
export function tableRowsToLines(rows: unknown[][]): string[] {
  const nonEmpty = rows.filter((row) => row.some((cell) => cellText(cell) !== ""));
  const [header = [], ...body] = nonEmpty;
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
