// Knowledge base rows. document_count is counted, not stored, so it can never drift. One being deleted
// (deletions.ts) is not found, listed or counted.
import type { Db } from "./db.ts";
import { writeTx } from "./db.ts";
import { newId } from "./ids.ts";
import { parseJsonObject } from "./json.ts";
import { decodeCursor, listCursor, toPage, type Page } from "./pagination.ts";
import { notFound, usageLimitExceeded } from "../errors.ts";

interface KnowledgeBaseRow {
  id: string;
  account_id: string;
  name: string;
  description: string | null;
  metadata: string;
  document_count: number;
  created_at: string;
  updated_at: string;
}

export interface KnowledgeBase {
  id: string;
  account_id: string;
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  document_count: number;
  created_at: string;
  updated_at: string;
}

const SELECT = `SELECT k.id, k.account_id, k.name, k.description, k.metadata, k.created_at, k.updated_at,
    (SELECT COUNT(*) FROM documents d WHERE d.kb_id = k.id AND d.deleting = 0) AS document_count
  FROM knowledge_bases k`;

function toKnowledgeBase(row: KnowledgeBaseRow): KnowledgeBase {
  return { ...row, metadata: parseJsonObject(row.metadata) };
}

/** Whether the knowledge base exists and is not being deleted (store/deletions.ts). */
export function knowledgeBaseLive(db: Db, kbId: string): boolean {
  return db.query("SELECT 1 FROM knowledge_bases WHERE id = ? AND deleting = 0").get(kbId) !== null;
}

/** The ids of every knowledge base not being deleted, of all accounts. */
export function liveKnowledgeBaseIds(db: Db): string[] {
  return db.query<{ id: string }, []>("SELECT id FROM knowledge_bases WHERE deleting = 0").all().map((row) => row.id);
}

export function countKnowledgeBases(db: Db, accountId: string): number {
  return db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM knowledge_bases WHERE account_id = ? AND deleting = 0").get(accountId)!.n;
}

export interface NewKnowledgeBase {
  accountId: string;
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  /** Plan cap on knowledge bases per account, checked inside the write transaction; null = unlimited. */
  limit: number | null;
  now: Date;
}

export function createKnowledgeBase(db: Db, input: NewKnowledgeBase): KnowledgeBase {
  return writeTx(db, () => {
    const used = countKnowledgeBases(db, input.accountId);
    if (input.limit !== null && used >= input.limit) {
      throw usageLimitExceeded(
        `Knowledge base limit reached: your plan allows ${input.limit}. Delete a knowledge base or upgrade your plan.`,
        { resource: "knowledge_bases", limit: input.limit, used },
      );
    }
    const id = newId("kb", input.now.getTime());
    const now = input.now.toISOString();
    db.query(
      `INSERT INTO knowledge_bases (id, account_id, name, description, metadata, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ).run(id, input.accountId, input.name, input.description, JSON.stringify(input.metadata), now, now);
    return getKnowledgeBase(db, input.accountId, id);
  });
}

/**
 * NOT_FOUND unless the account owns the knowledge base, without counting its documents as
 * getKnowledgeBase does (~2.3 ms at 50,000 documents, on every search and document call).
 */
export function assertKnowledgeBaseOwned(db: Db, accountId: string, id: string): void {
  const row = db.query<{ found: number }, [string, string]>("SELECT 1 AS found FROM knowledge_bases WHERE id = ? AND account_id = ? AND deleting = 0").get(id, accountId);
  if (!row) throw notFound("Knowledge base", id);
}

/** The knowledge base, if the account owns it; otherwise NOT_FOUND (never revealing that it exists). */
export function getKnowledgeBase(db: Db, accountId: string, id: string): KnowledgeBase {
  const row = db.query<KnowledgeBaseRow, [string, string]>(`${SELECT} WHERE k.id = ? AND k.account_id = ? AND k.deleting = 0`).get(id, accountId);
  if (!row) throw notFound("Knowledge base", id);
  return toKnowledgeBase(row);
}

export function listKnowledgeBases(db: Db, accountId: string, limit: number, cursor?: string): Page<KnowledgeBase> {
  const after = cursor ? decodeCursor(cursor, { kind: "knowledge_bases", owner: accountId }) : null;
  const rows = after
    ? db.query<KnowledgeBaseRow, [string, string, number]>(
        `${SELECT} WHERE k.account_id = ? AND k.deleting = 0 AND k.id < ? ORDER BY k.id DESC LIMIT ?`,
      ).all(accountId, after, limit + 1)
    : db.query<KnowledgeBaseRow, [string, number]>(`${SELECT} WHERE k.account_id = ? AND k.deleting = 0 ORDER BY k.id DESC LIMIT ?`).all(
        accountId,
        limit + 1,
      );
  return toPage(rows, limit, (r) => listCursor({ kind: "knowledge_bases", owner: accountId }, r.id), toKnowledgeBase);
}

export interface KnowledgeBasePatch {
  name?: string;
  description?: string | null;
  metadata?: Record<string, unknown>;
}

/** Applies the fields the patch sets; one that sets none changes nothing, not even updated_at. */
export function updateKnowledgeBase(db: Db, accountId: string, id: string, patch: KnowledgeBasePatch, now: Date): KnowledgeBase {
  return writeTx(db, () => {
    const current = getKnowledgeBase(db, accountId, id);
    if (patch.name === undefined && patch.description === undefined && patch.metadata === undefined) return current;
    db.query("UPDATE knowledge_bases SET name = ?, description = ?, metadata = ?, updated_at = ? WHERE id = ?").run(
      patch.name ?? current.name,
      patch.description === undefined ? current.description : patch.description,
      JSON.stringify(patch.metadata ?? current.metadata),
      now.toISOString(),
      id,
    );
    return getKnowledgeBase(db, accountId, id);
  });
}
