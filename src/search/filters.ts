// Metadata filters (spec 4.4.1): {key: {$op: value, ...}, ...}, every condition ANDed. Checked up front
// (every problem reported with its path) and compiled to a predicate over a document's metadata.
//
// Semantics: values compare by type — numbers with numbers, strings with strings, booleans with booleans;
// two ISO 8601 dates compare as instants ("2024-05-01" equals "2024-05-01T00:00:00Z"; a date-time without
// an offset is UTC). A metadata value that is an array matches $eq/$in when any element matches. $ne and
// $nin are the negations of $eq and $in, so they also match documents without the key; the range
// operators match only numbers against numbers and dates against dates.
import type { ValidationIssue } from "../errors.ts";

export type Scalar = string | number | boolean;
export type MetadataFilter = Record<string, Partial<Record<Operator, unknown>>>;
export type DocumentPredicate = (metadata: Record<string, unknown>) => boolean;

export const OPERATORS = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"] as const;
type Operator = (typeof OPERATORS)[number];

const RANGE_OPERATORS = new Set<string>(["$gt", "$gte", "$lt", "$lte"]);
const LIST_OPERATORS = new Set<string>(["$in", "$nin"]);
const MAX_LIST = 1000;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/;

/** Milliseconds since the epoch when the value is an ISO 8601 date or date-time, else null. */
export function isoInstant(value: unknown): number | null {
  if (typeof value !== "string") return null;
  const match = ISO_DATE.exec(value);
  if (!match) return null;
  const withZone = value.length > 10 && !match[1] ? `${value}Z` : value;
  const ms = Date.parse(withZone.replace(" ", "T"));
  return Number.isNaN(ms) ? null : ms;
}

function isScalar(value: unknown): value is Scalar {
  return typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Every problem with a filter, with paths relative to the filter (prefix them with "filter"). */
export function filterIssues(filter: unknown): ValidationIssue[] {
  if (!isPlainObject(filter)) return [{ path: [], message: "must be an object of {metadata_key: {operator: value}}" }];
  const issues: ValidationIssue[] = [];
  for (const [key, condition] of Object.entries(filter)) {
    if (!isPlainObject(condition) || Object.keys(condition).length === 0) {
      issues.push({ path: [key], message: `must be an object of operators, e.g. {"$eq": "value"}; operators: ${OPERATORS.join(", ")}` });
      continue;
    }
    for (const [op, value] of Object.entries(condition)) {
      const path = [key, op];
      if (!(OPERATORS as readonly string[]).includes(op)) {
        issues.push({ path, message: `unknown operator; use one of ${OPERATORS.join(", ")}` });
      } else if (LIST_OPERATORS.has(op)) {
        if (!Array.isArray(value)) issues.push({ path, message: "must be an array of strings, numbers or booleans" });
        else if (value.length > MAX_LIST) issues.push({ path, message: `must have at most ${MAX_LIST} values` });
        else value.forEach((item, i) => {
          if (!isScalar(item)) issues.push({ path: [...path, i], message: "must be a string, number or boolean" });
        });
      } else if (RANGE_OPERATORS.has(op)) {
        if (!(typeof value === "number" && Number.isFinite(value)) && isoInstant(value) === null) {
          issues.push({ path, message: "must be a number or an ISO 8601 date (e.g. 2024-05-01 or 2024-05-01T12:00:00Z)" });
        }
      } else if (!isScalar(value)) {
        issues.push({ path, message: "must be a string, number or boolean" });
      }
    }
  }
  return issues;
}

function equals(actual: unknown, expected: Scalar): boolean {
  if (Array.isArray(actual)) return actual.some((item) => equals(item, expected));
  if (actual === expected) return true;
  const a = isoInstant(actual);
  return a !== null && a === isoInstant(expected);
}

/** <0, 0, >0 for comparable values (number/number, date/date); null when they do not compare. */
function compare(actual: unknown, bound: number | string): number | null {
  if (typeof bound === "number") return typeof actual === "number" ? actual - bound : null;
  const a = isoInstant(actual);
  return a === null ? null : a - isoInstant(bound)!;
}

function condition(op: Operator, expected: unknown): (actual: unknown) => boolean {
  switch (op) {
    case "$eq":
      return (actual) => equals(actual, expected as Scalar);
    case "$ne":
      return (actual) => !equals(actual, expected as Scalar);
    case "$in":
      return (actual) => (expected as Scalar[]).some((item) => equals(actual, item));
    case "$nin":
      return (actual) => !(expected as Scalar[]).some((item) => equals(actual, item));
    default: {
      const test = { $gt: (c: number) => c > 0, $gte: (c: number) => c >= 0, $lt: (c: number) => c < 0, $lte: (c: number) => c <= 0 }[op];
      return (actual) => {
        const c = compare(actual, expected as number | string);
        return c !== null && test(c);
      };
    }
  }
}

/** The predicate of a filter already checked by filterIssues. */
export function compileFilter(filter: MetadataFilter): DocumentPredicate {
  const tests: { key: string; test: (actual: unknown) => boolean }[] = [];
  for (const [key, ops] of Object.entries(filter)) {
    for (const [op, value] of Object.entries(ops)) tests.push({ key, test: condition(op as Operator, value) });
  }
  return (metadata) => tests.every(({ key, test }) => test(Object.hasOwn(metadata, key) ? metadata[key] : undefined));
}
