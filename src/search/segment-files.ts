// Where a knowledge base's search segments live: <data>/indexes/<kb_id>/<watermark>/ with keyword/,
// vector/ and manifest.json. A segment is built in a temporary folder beside them and published by
// renaming it, so a folder named by a number is always complete; everything else is debris of a crash.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Bumped when a segment's files change shape or its keyword terms change (tokenize.ts; 7: CJK characters
 * beside their pairs, Thai-like scripts split into words; 8: ß, ø, ł, æ, œ, ı… spelled as in ASCII, fewer stopwords);
 * a segment of another format is rebuilt (index-recovery.ts).
 */
export const SEGMENT_FORMAT = 8;

export interface SegmentManifest {
  /** SEGMENT_FORMAT when written (absent in format 1, whose vector side was an HNSW graph). */
  format?: number;
  /** The last search_log seq the segment contains. */
  watermark: number;
  chunkCount: number;
  builtAt: string;
}

export interface PublishedSegment extends SegmentManifest {
  dir: string;
}

const PUBLISHED = /^\d+$/;

function indexesDir(dataDir: string): string {
  return join(dataDir, "indexes");
}

function kbDir(dataDir: string, kbId: string): string {
  return join(indexesDir(dataDir), kbId);
}

/** The watermarks of the knowledge base's published segments (their folders' names), newest first. */
function publishedWatermarks(dataDir: string, kbId: string): number[] {
  const dir = kbDir(dataDir, kbId);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => PUBLISHED.test(name))
    .map(Number)
    .sort((a, b) => b - a);
}

/** The knowledge base's newest published segment, or null. */
export function latestSegment(dataDir: string, kbId: string): PublishedSegment | null {
  const newest = publishedWatermarks(dataDir, kbId)[0];
  if (newest === undefined) return null;
  const segmentDir = join(kbDir(dataDir, kbId), String(newest));
  const manifest = JSON.parse(readFileSync(join(segmentDir, "manifest.json"), "utf8")) as SegmentManifest;
  return { ...manifest, dir: segmentDir };
}

/** A fresh, empty folder to build the knowledge base's next segment in. */
export function segmentWorkDir(dataDir: string, kbId: string): string {
  const dir = join(kbDir(dataDir, kbId), `building-${process.pid}-${Date.now()}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** Writes the manifest and renames the work folder into place; returns the published folder. */
export function publishSegment(dataDir: string, kbId: string, workDir: string, manifest: Omit<SegmentManifest, "format">): string {
  writeFileSync(join(workDir, "manifest.json"), JSON.stringify({ format: SEGMENT_FORMAT, ...manifest } satisfies SegmentManifest), { mode: 0o600 });
  const dir = join(kbDir(dataDir, kbId), String(manifest.watermark));
  rmSync(dir, { recursive: true, force: true });
  renameSync(workDir, dir);
  return dir;
}

/**
 * Segments the index worker keeps of each knowledge base (removeStaleSegments): keeping the one before the
 * newest spares a search that just picked it from finding it gone before opening it.
 */
export const SEGMENTS_KEPT = 2;

/** How many of the knowledge base's published segments are newer than the one of `watermark`. */
export function newerSegments(dataDir: string, kbId: string, watermark: number): number {
  return publishedWatermarks(dataDir, kbId).filter((published) => published > watermark).length;
}

/** Removes the knowledge base's unfinished builds and all but its `keep` newest segments. */
export function removeStaleSegments(dataDir: string, kbId: string, keep: number): void {
  const dir = kbDir(dataDir, kbId);
  if (!existsSync(dir)) return;
  const kept = new Set(publishedWatermarks(dataDir, kbId).slice(0, keep).map(String));
  for (const name of readdirSync(dir)) if (!kept.has(name)) rmSync(join(dir, name), { recursive: true, force: true });
}

/** Removes the folders of knowledge bases that no longer exist; returns their ids. */
export function removeDeletedKnowledgeBases(dataDir: string, exists: (kbId: string) => boolean): string[] {
  const root = indexesDir(dataDir);
  if (!existsSync(root)) return [];
  const removed = readdirSync(root).filter((kbId) => !exists(kbId));
  for (const kbId of removed) rmSync(join(root, kbId), { recursive: true, force: true });
  return removed;
}
