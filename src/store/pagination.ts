// Keyset pagination: because keys never move, pages stay stable while new rows are inserted. The cursor is
// opaque to clients (base64url of the list, its owner and the last key seen), so a cursor from another
// list, or from the same kind of list of another owner (another knowledge base's documents), is refused
// like a malformed one, rather than read as a key it is not. A document's chunks are paged by their
// chunk_index itself (chunks.ts), as the service spec has it.
import { invalid, type QuarryError } from "../errors.ts";

export interface Page<T> {
  data: T[];
  meta: { cursor: string | null; has_more: boolean };
}

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** A paged list: its kind and whose it is (the account's knowledge bases, a knowledge base's documents …). */
export interface PagedList {
  kind: "knowledge_bases" | "documents" | "requests";
  /** The id of the account, knowledge base or document the list belongs to. */
  owner: string;
}

/** The cursor of a page of `list` whose last row has the key `key`. */
export function listCursor({ kind, owner }: PagedList, key: string): string {
  return Buffer.from(JSON.stringify([kind, owner, key])).toString("base64url");
}

/** Like the query parameters zod checks. */
export function invalidCursor(): QuarryError {
  return invalid(["query", "cursor"], "is not a valid cursor");
}

/**
 * Decodes a cursor that listCursor made for the same list, or throws a 400 naming the cursor. Only the exact
 * text listCursor made is taken: Node's base64 decoding skips characters outside the alphabet and a partial
 * last group, so a cursor with junk appended ("…x", "…!!") decoded to the same key.
 */
export function decodeCursor(cursor: string, list: PagedList): string {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    // Made again from its key, it is the same text only if it holds this list's kind and owner and nothing else.
    if (Array.isArray(value) && typeof value[2] === "string" && listCursor(list, value[2]) === cursor) return value[2];
  } catch {
    // fall through to the validation error
  }
  throw invalidCursor();
}

/** Builds a page from rows fetched with limit + 1, the extra row telling whether there are more; `cursorOf` its last row's cursor. */
export function toPage<R, T>(rows: R[], limit: number, cursorOf: (row: R) => string, map: (row: R) => T): Page<T> {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  return {
    data: pageRows.map(map),
    meta: { cursor: hasMore ? cursorOf(pageRows[pageRows.length - 1]) : null, has_more: hasMore },
  };
}
