// Bounds on the free-form metadata of a knowledge base or document. Metadata is stored, returned with every
// search result and read by every filtered search, so its size is capped well above real use (Pinecone
// allows 40 KB per record): every problem is reported as a validation issue with its path.
import type { ValidationIssue } from "../errors.ts";
import { jsonByteSize } from "./json-size.ts";
import { characterCount } from "../characters.ts";

export const METADATA_LIMITS = {
  /** UTF-8 bytes of the metadata serialized as JSON. */
  bytes: 32 * 1024,
  /** Keys in the metadata object, and in each object nested in it. */
  keys: 64,
  /** Characters in one key. */
  keyLength: 256,
  /** Levels of objects and arrays, the metadata object itself being the first. */
  depth: 5,
} as const;

/** Enough to show what is wrong without echoing a whole oversized value back. */
const MAX_ISSUES = 20;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Shape problems (key count, key length, depth, numbers out of range) under `value`, which sits `depth` levels deep. */
function shapeIssues(value: unknown, path: (string | number)[], depth: number, issues: ValidationIssue[]): void {
  if (issues.length >= MAX_ISSUES) return;
  // JSON.parse reads 1e999 as Infinity, which would be stored as null.
  if (typeof value === "number" && !Number.isFinite(value)) issues.push({ path, message: "must be a finite number (this one overflows)" });
  if (typeof value !== "object" || value === null) return;
  if (depth > METADATA_LIMITS.depth) {
    issues.push({ path, message: `is nested too deeply: objects and arrays may nest at most ${METADATA_LIMITS.depth} levels` });
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => shapeIssues(item, [...path, i], depth + 1, issues));
    return;
  }
  const keys = Object.keys(value);
  if (keys.length > METADATA_LIMITS.keys) {
    issues.push({ path, message: `must have at most ${METADATA_LIMITS.keys} keys (this object has ${keys.length})` });
    return;
  }
  for (const key of keys) {
    if (characterCount(key) > METADATA_LIMITS.keyLength) {
      issues.push({ path: [...path, key], message: `key must be at most ${METADATA_LIMITS.keyLength} characters (this one has ${characterCount(key)})` });
    } else {
      shapeIssues((value as Record<string, unknown>)[key], [...path, key], depth + 1, issues);
    }
  }
}

/** Every problem with a metadata object, with paths relative to it (prefix them with "metadata"). */
export function metadataIssues(metadata: unknown): ValidationIssue[] {
  if (!isObject(metadata)) return [{ path: [], message: "must be a JSON object" }];
  const bytes = jsonByteSize(metadata, METADATA_LIMITS.bytes);
  if (bytes > METADATA_LIMITS.bytes) {
    return [{ path: [], message: `must be at most ${METADATA_LIMITS.bytes} bytes as JSON (this one is larger)` }];
  }
  const issues: ValidationIssue[] = [];
  shapeIssues(metadata, [], 1, issues);
  return issues;
}

/** The bytes stored metadata counts toward the account's storage: its JSON, nothing for an empty object. */
export const METADATA_BYTES_SQL = "CASE WHEN metadata = '{}' THEN 0 ELSE length(CAST(metadata AS BLOB)) END";
