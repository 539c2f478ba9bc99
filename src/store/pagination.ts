// Keyset pagination. The cursor is opaque to clients (base64url of the list's name and the last key seen),
// and because keys never move, pages stay stable while new rows are inserted. A cursor from another list
// is refused like a malformed one, rather than read as a key it is not.
import { invalid } from "../errors.ts";

export interface Page<T> {
  data: T[];
  meta: { cursor: string | null; has_more: boolean };
}

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** The lists that are paged. */
export type PagedList = "knowledge_bases" | "documents" | "chunks" | "requests";

function encodeCursor(list: PagedList, key: string | number): string {
  return Buffer.from(JSON.stringify([list, key])).toString("base64url");
}

/** Decodes a cursor that toPage made for the same list, or throws a 400 naming the cursor. */
export function decodeCursor<K extends string | number>(cursor: string, list: PagedList, type: "string" | "number"): K {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(value) && value.length === 2 && value[0] === list && typeof value[1] === type) return value[1] as K;
  } catch {
    // fall through to the validation error
  }
  throw invalid(["query", "cursor"], "is not a valid cursor"); // like the query parameters zod checks
}

/** Builds a page from rows fetched with limit + 1, the extra row telling whether there are more. */
export function toPage<R, T>(rows: R[], limit: number, list: PagedList, keyOf: (row: R) => string | number, map: (row: R) => T): Page<T> {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  return {
    data: pageRows.map(map),
    meta: { cursor: hasMore ? encodeCursor(list, keyOf(pageRows[pageRows.length - 1])) : null, has_more: hasMore },
  };
}
