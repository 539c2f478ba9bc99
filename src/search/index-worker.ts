// The index worker: a thread with its own database connection that builds knowledge bases' search
// segments (segment-builder.ts) whenever enough changes piled up since their last one, then publishes
// them, tells the HTTP thread, and forgets the log rows and folders the new segment makes obsolete.
// Builds take seconds to minutes at a million chunks; none of it runs on the HTTP thread.
import { openDatabase, type Db } from "../store/db.ts";
import { knowledgeBaseLive } from "../store/knowledge-bases.ts";
import { prepareRuntime } from "../runtime/index.ts";
import { runInBackground } from "../background-priority.ts";
import { loggedKnowledgeBases, trimDeletedKnowledgeBases, trimDocumentLog } from "./index-log.ts";
import { forgetKnowledgeBase, recordSegment, recordUnfinished } from "./index-recovery.ts";
import { buildSegment } from "./segment-builder.ts";
import { latestSegment, removeDeletedKnowledgeBases, removeStaleSegments, SEGMENTS_KEPT } from "./segment-files.ts";
import type { FromIndexWorker, IndexWorkerSettings, ToIndexWorker } from "./index-worker-protocol.ts";

declare const self: Worker;

let settings: IndexWorkerSettings;
let db: Db;
let timer: Timer | undefined;
/** Each knowledge base's count of changes at the last check, and since when it has been that. */
const lastCounts = new Map<string, { changes: number; since: number }>();

function post(message: FromIndexWorker): void {
  self.postMessage(message);
}

/**
 * Knowledge bases whose changes since their segment call for a new one: at least minChanges of them, and
 * `growth` × the segment's size or no new one for quietMs. Publishing a segment trims the log up to its
 * watermark (recordSegment), so a knowledge base's log rows are its changes since.
 */
function dueKnowledgeBases(): string[] {
  const pending = db
    .query<{ kb_id: string; n: number }, []>(
      "SELECT kb_id, COUNT(*) AS n FROM search_log WHERE kb_id NOT IN (SELECT id FROM knowledge_bases WHERE deleting = 1) GROUP BY kb_id",
    )
    .all();
  const now = performance.now();
  const counts = new Map(pending.map((row) => [row.kb_id, row.n]));
  for (const kbId of lastCounts.keys()) if (!counts.has(kbId)) lastCounts.delete(kbId);
  for (const [kbId, changes] of counts) if (lastCounts.get(kbId)?.changes !== changes) lastCounts.set(kbId, { changes, since: now });
  return pending
    .filter((row) => row.n >= settings.minChanges)
    .filter(
      (row) =>
        now - lastCounts.get(row.kb_id)!.since >= settings.quietMs ||
        row.n >= settings.growth * (latestSegment(settings.dataDir, row.kb_id)?.chunkCount ?? 0),
    )
    .map((row) => row.kb_id);
}

function build(kbId: string): void {
  const started = performance.now();
  const segment = buildSegment(db, settings.dataDir, kbId, settings.dimension);
  removeStaleSegments(settings.dataDir, kbId, SEGMENTS_KEPT);
  recordSegment(db, kbId, segment.watermark);
  post({ type: "built", kbId, ...segment, ms: Math.round(performance.now() - started) });
}

/**
 * Removes the segment folders, segment records and changes of knowledge bases deleted since the start,
 * also of those deleted before their first segment, which have logged changes but no folder.
 */
function forgetDeleted(): void {
  const live = (kbId: string) => knowledgeBaseLive(db, kbId);
  const deleted = new Set(removeDeletedKnowledgeBases(settings.dataDir, live));
  for (const kbId of loggedKnowledgeBases(db)) if (!live(kbId)) deleted.add(kbId);
  for (const kbId of deleted) forgetKnowledgeBase(db, kbId);
}

/**
 * At start: removes what crashes and deletions left behind: unfinished builds, old segments, the log rows
 * of deleted KBs (their folders go at every check: forgetDeleted). It also finishes recording each newest
 * segment: a stop or crash soon after a publish (forgetting a million log rows takes seconds) leaves rows
 * the segment holds, which would count as changes and call for a needless rebuild.
 */
function sweep(): void {
  trimDeletedKnowledgeBases(db);
  for (const { id, deleting } of db.query<{ id: string; deleting: number }, []>("SELECT id, deleting FROM knowledge_bases").all()) {
    removeStaleSegments(settings.dataDir, id, SEGMENTS_KEPT);
    const newest = latestSegment(settings.dataDir, id);
    if (newest && deleting === 0 && recordUnfinished(db, id, newest.watermark)) recordSegment(db, id, newest.watermark);
  }
}

function check(): void {
  clearTimeout(timer);
  try {
    trimDocumentLog(db);
    forgetDeleted();
    for (const kbId of dueKnowledgeBases()) {
      try {
        build(kbId);
      } catch (error) {
        post({ type: "error", kbId, message: (error as Error).message });
      }
    }
  } catch (error) {
    post({ type: "error", kbId: null, message: (error as Error).message });
  }
  timer = setTimeout(check, settings.pollMs);
}

self.onmessage = async (event: MessageEvent<ToIndexWorker>) => {
  const message = event.data;
  if (message.type === "init") {
    runInBackground();
    settings = message.settings;
    await prepareRuntime(settings.dataDir);
    db = openDatabase(settings.databasePath, { migrate: false });
    sweep();
    check();
  } else if (message.type === "check" && db) {
    check();
  } else if (message.type === "stop") {
    // Closing the connection lets the server's final checkpoint truncate the WAL.
    clearTimeout(timer);
    db?.close();
    post({ type: "stopped" });
  }
};
