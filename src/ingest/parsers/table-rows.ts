import { cleanLine } from "./text-cleanup.ts";

/**
 * Table rows → text lines that keep each value next to its column name, e.g.
 * "Name: Jane Smith; Age: 37". The first row with any content is the header; empty cells are
 * left out; a column without a header name is called "Column N".
 */
export function tableRowsToLines(rows: unknown[][], firstColumn = 0): string[] {
  const nonEmpty = rows.filter((row) => row.some((cell) => cellText(cell) !== ""));
  const [header = [], ...body] = nonEmpty;
  const unnamed = (index: number) => `Column ${firstColumn + index + 1}`;
  const names = header.map((cell, index) => cellText(cell) || unnamed(index));
  const lines: string[] = [];
  for (const row of body) {
    const parts: string[] = [];
    row.forEach((cell, index) => {
      const value = cellText(cell);
      if (value !== "") parts.push(`${names[index] ?? unnamed(index)}: ${value}`);
    });
    lines.push(parts.join("; "));
  }
  // A table with a header row only still has searchable text.
  return lines.length > 0 ? lines : names.length > 0 ? [names.join("; ")] : [];
}

function cellText(cell: unknown): string {
  return cell === null || cell === undefined ? "" : cleanLine(String(cell));
}

/**
 * A sheet's rows → lines, tables set side by side each with its own header row. Columns are grouped where
 * an empty column parts them; groups whose first row with content differs are separate tables (one at
 * B3:C4, another at E4:F5: the second's header is row 4, not row 3). Groups starting on the same row share
 * the header row, so they stay one table: a spacer column between labels and figures keeps each row whole.
 */
export function sheetRowsToLines(rows: unknown[][]): string[] {
  // Rows may be sparse (holes for missing cells) and wide: only the cells present are visited.
  const firstRowOf = new Map<number, number>();
  rows.forEach((row, r) =>
    row.forEach((cell, column) => {
      if (cellText(cell) !== "" && !firstRowOf.has(column)) firstRowOf.set(column, r);
    }),
  );
  const columns = [...firstRowOf.keys()].sort((a, b) => a - b);
  const tables: { from: number; to: number; top: number }[] = [];
  for (let i = 0; i < columns.length; ) {
    const from = columns[i];
    let top = firstRowOf.get(from)!;
    while (i + 1 < columns.length && columns[i + 1] === columns[i] + 1) top = Math.min(top, firstRowOf.get(columns[++i])!);
    const to = columns[i++] + 1;
    const previous = tables.at(-1);
    if (previous && previous.top === top) previous.to = to;
    else tables.push({ from, to, top });
  }
  if (tables.length <= 1) return tableRowsToLines(rows);
  return tables.flatMap(({ from, to }) => tableRowsToLines(rows.map((row) => row.slice(from, to)), from));
}
