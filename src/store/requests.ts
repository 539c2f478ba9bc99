// The request history (service spec §2.7): one row per /api request, written in batches by
// RequestLogWriter, listed newest first per account.
import type { Db } from "./db.ts";
import { parseJsonObject } from "./json.ts";
import { decodeCursor, listCursor, toPage, type Page } from "./pagination.ts";
import { invalid, notFound } from "../errors.ts";
import type { AuthType } from "../accounts/service.ts";

export interface RequestLogEntry {
  id: string;
  method: string;
  path: string;
  status_code: number;
  duration_ms: number;
  auth_type: AuthType;
  kb_id: string | null;
  request_summary: Record<string, unknown>;
  response_summary: Record<string, unknown>;
  created_at: string;
}

/** An entry as written: accountId and auth_type are null when no account can be attributed. */
export interface RequestLogRecord extends Omit<RequestLogEntry, "auth_type"> {
  accountId: string | null;
  auth_type: AuthType | null;
}

interface RequestLogRow extends Omit<RequestLogEntry, "request_summary" | "response_summary"> {
  request_summary: string;
  response_summary: string;
}

const COLUMNS = "id, method, path, status_code, duration_ms, auth_type, kb_id, request_summary, response_summary, created_at";

function toEntry(row: RequestLogRow): RequestLogEntry {
  return {
    ...row,
    request_summary: parseJsonObject(row.request_summary),
    response_summary: parseJsonObject(row.response_summary),
  };
}

/** Within the caller's write transaction (request-log-writer.ts batches them). */
export function insertRequestLog(db: Db, records: RequestLogRecord[]): void {
  const insert = db.query(
    `INSERT OR IGNORE INTO request_log (account_id, ${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const r of records) {
    insert.run(
      r.accountId,
      r.id,
      r.method,
      r.path,
      r.status_code,
      r.duration_ms,
      r.auth_type,
      r.kb_id,
      JSON.stringify(r.request_summary),
      JSON.stringify(r.response_summary),
      r.created_at,
    );
  }
}

export interface RequestLogFilter {
  authType: AuthType;
  method?: string;
  /** Status class: 1–5 for 1xx–5xx. */
  statusClass?: number;
  statusCode?: number;
  pathContains?: string;
  kbId?: string;
  /** Inclusive lower bound (ISO 8601). */
  from?: string;
  /** Exclusive upper bound (ISO 8601). */
  to?: string;
}

const CURSOR_SEPARATOR = "|";

/**
 * The account's entries matching the filter, newest first (created_at, then id, both descending). Only
 * those from `keptSince` on: older ones are past the retention period, whether or not pruned yet.
 */
export function listRequestLog(
  db: Db,
  accountId: string,
  keptSince: Date,
  filter: RequestLogFilter,
  limit: number,
  cursor?: string,
): Page<RequestLogEntry> {
  const where = ["account_id = ?", "auth_type = ?", "created_at >= ?"];
  const params: (string | number)[] = [accountId, filter.authType, keptSince.toISOString()];
  const add = (clause: string, ...values: (string | number)[]) => {
    where.push(clause);
    params.push(...values);
  };
  if (filter.method) add("method = ?", filter.method);
  if (filter.statusClass) add("status_code BETWEEN ? AND ?", filter.statusClass * 100, filter.statusClass * 100 + 99);
  if (filter.statusCode) add("status_code = ?", filter.statusCode);
  if (filter.pathContains) add("instr(path, ?) > 0", filter.pathContains);
  if (filter.kbId) add("kb_id = ?", filter.kbId);
  if (filter.from) add("created_at >= ?", filter.from);
  if (filter.to) add("created_at < ?", filter.to);
  if (cursor) {
    const key = decodeCursor(cursor, { kind: "requests", owner: accountId });
    const at = key.indexOf(CURSOR_SEPARATOR);
    if (at < 0) throw invalid(["query", "cursor"], "is not a valid cursor");
    add("(created_at, id) < (?, ?)", key.slice(0, at), key.slice(at + 1));
  }
  const rows = db
    .query<RequestLogRow, (string | number)[]>(
      `SELECT ${COLUMNS} FROM request_log WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`,
    )
    .all(...params, limit + 1);
  return toPage(rows, limit, (r) => listCursor({ kind: "requests", owner: accountId }, `${r.created_at}${CURSOR_SEPARATOR}${r.id}`), toEntry);
}

/** The entry, if it belongs to the account and dates from `keptSince` on; otherwise NOT_FOUND. */
export function getRequestLogEntry(db: Db, accountId: string, keptSince: Date, id: string): RequestLogEntry {
  const row = db
    .query<RequestLogRow, [string, string, string]>(`SELECT ${COLUMNS} FROM request_log WHERE id = ? AND account_id = ? AND created_at >= ?`)
    .get(id, accountId, keptSince.toISOString());
  if (!row) throw notFound("Request", id);
  return toEntry(row);
}

/** Deletes up to `limit` of the entries older than the cutoff, oldest first, in the caller's transaction; returns how many. */
export function pruneRequestLog(db: Db, olderThan: Date, limit: number): number {
  return db
    .query("DELETE FROM request_log WHERE rowid IN (SELECT rowid FROM request_log WHERE created_at < ? ORDER BY created_at LIMIT ?)")
    .run(olderThan.toISOString(), limit).changes;
}

/** Like pruneRequestLog, for the entries of no account only. */
export function pruneUnattributedRequestLog(db: Db, olderThan: Date, limit: number): number {
  return db
    .query(
      "DELETE FROM request_log WHERE rowid IN (SELECT rowid FROM request_log WHERE account_id IS NULL AND auth_type IS NULL AND created_at < ? LIMIT ?)",
    )
    .run(olderThan.toISOString(), limit).changes;
}
