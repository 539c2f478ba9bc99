// Keyset pagination. The cursor is opaque to clients (base64url of the list, its owner and the last key
// seen), and because keys never move, pages stay stable while new rows are inserted. A cursor from another
// list, or from the same kind of list of another owner (another knowledge base's documents), is refused
// like a malformed one, rather than read as a key it is not.
import { invalid } from "../errors.ts";

export interface Page<T> {
  data: T[];
  meta: { cursor: string | null; has_more: boolean };
}

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** A paged list: its kind and whose it is (the account's knowledge bases, a knowledge base's documents …). */
export interface PagedList {
  kind: "knowledge_bases" | "documents" | "chunks" | "requests";
  /** The id of the account, knowledge base or document the list belongs to. */
  owner: string;
}

function encodeCursor({ kind, owner }: PagedList, key: string | number): string {
  return Buffer.from(JSON.stringify([kind, owner, key])).toString("base64url");
}

/** Number keys are positions (chunk_index): whole numbers from 0. */
function isKey(key: unknown, type: "string" | "number"): boolean {
  return type === "string" ? typeof key === "string" : Number.isSafeInteger(key) && (key as number) >= 0;
}

/** Decodes a cursor that toPage made for the same list, or throws a 400 naming the cursor. */
export function decodeCursor<K extends string | number>(cursor: string, { kind, owner }: PagedList, type: "string" | "number"): K {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(value) && value.length === 3 && value[0] === kind && value[1] === owner && isKey(value[2], type)) return value[2] as K;
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
