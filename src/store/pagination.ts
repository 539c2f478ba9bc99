// Keyset pagination. The cursor is opaque to clients (base64url of the last key seen), and because keys
// never move, pages stay stable while new rows are inserted.
import { invalid } from "../errors.ts";

export interface Page<T> {
  data: T[];
  meta: { cursor: string | null; has_more: boolean };
}

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export function encodeCursor(key: string | number): string {
  return Buffer.from(JSON.stringify(key)).toString("base64url");
}

/** Decodes a cursor made by encodeCursor with the same key type, or throws a 400 naming the cursor. */
export function decodeCursor<K extends string | number>(cursor: string, type: "string" | "number"): K {
  try {
    const key = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (typeof key === type) return key as K;
  } catch {
    // fall through to the validation error
  }
  throw invalid(["query", "cursor"], "is not a valid cursor"); // like the query parameters zod checks
}

/** Builds a page from rows fetched with limit + 1, the extra row telling whether there are more. */
export function toPage<R, T>(rows: R[], limit: number, keyOf: (row: R) => string | number, map: (row: R) => T): Page<T> {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  return {
    data: pageRows.map(map),
    meta: { cursor: hasMore ? encodeCursor(keyOf(pageRows[pageRows.length - 1])) : null, has_more: hasMore },
  };
}
