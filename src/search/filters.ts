// Metadata filters (spec 4.4.1): {key: {$op: value, ...}, ...}, every condition ANDed. Checked up front
// (every problem reported with its path) and compiled to a predicate over a document's metadata.
//
// Semantics: values compare by type — numbers with numbers, strings with strings, booleans with booleans;
// two ISO 8601 dates compare as instants ("2024-05-01" equals "2024-05-01T00:00:00Z"; a date-time without
// an offset is UTC). A metadata value that is an array matches $eq/$in when any of its own elements matches. $ne and
// $nin are the negations of $eq and $in, so they also match documents without the key; the range
// operators match only numbers against numbers and dates against dates.
//
// Filters are evaluated on the request's thread against every document of the knowledge base, so their size
// is bounded (FILTER_LIMITS) and the compiled predicate costs time linear in the filter's size per document.
import type { ValidationIssue } from "../errors.ts";
import { jsonByteSize } from "../store/json-size.ts";
import { characterCount } from "../characters.ts";
import { isoInstant } from "../iso-time.ts";

export type Scalar = string | number | boolean;
export type MetadataFilter = Record<string, Partial<Record<Operator, unknown>>>;
export type DocumentPredicate = (metadata: Record<string, unknown>) => boolean;

export const OPERATORS = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"] as const;
type Operator = (typeof OPERATORS)[number];

const RANGE_OPERATORS = new Set<string>(["$gt", "$gte", "$lt", "$lte"]);
/**
 * Other stores' combinators (Chroma, Pinecone, MongoDB). Used with its usual operand (a list of filters, or a
 * filter), such a key is told there is no such operator; one holding operators is a metadata key like any.
 */
const LOGICAL_OPERATORS = new Set<string>(["$and", "$or", "$not", "$nor"]);
const LIST_OPERATORS = new Set<string>(["$in", "$nin"]);

/** Far above what a real filter needs; each one bounds the work a single search can ask for. */
export const FILTER_LIMITS = {
  /** Metadata keys (top-level entries) in one filter. */
  keys: 32,
  /** UTF-8 bytes of the filter serialized as JSON. */
  bytes: 16 * 1024,
  /** Values in one $in or $nin array. */
  listValues: 1000,
  /** Characters in one string value. */
  stringLength: 1024,
  /** Characters in one metadata key (the longest a stored metadata key can be). */
  keyLength: 256,
} as const;

function isScalar(value: unknown): value is Scalar {
  return typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** An object holding at least one known operator ({"$eq": …}): a metadata key's condition, checked as such. */
function holdsOperators(value: unknown): boolean {
  return isPlainObject(value) && Object.keys(value).some((key) => (OPERATORS as readonly string[]).includes(key));
}

/** Why a value cannot be compared against, or null when it can. */
function valueIssue(value: unknown): string | null {
  if (!isScalar(value)) return "must be a string, number or boolean";
  if (typeof value === "string" && characterCount(value) > FILTER_LIMITS.stringLength) {
    return `must be at most ${FILTER_LIMITS.stringLength} characters (this one has ${characterCount(value)})`;
  }
  return null;
}

/** Problems with the filter as a whole (size, key count), checked before looking at any condition. */
function sizeIssues(filter: Record<string, unknown>): ValidationIssue[] {
  const keys = Object.keys(filter).length;
  if (keys > FILTER_LIMITS.keys) return [{ path: [], message: `must have at most ${FILTER_LIMITS.keys} keys (this one has ${keys})` }];
  const bytes = jsonByteSize(filter, FILTER_LIMITS.bytes);
  if (bytes > FILTER_LIMITS.bytes) {
    return [{ path: [], message: `must be at most ${FILTER_LIMITS.bytes} bytes as JSON (this one is larger)` }];
  }
  return [];
}

/** Every problem with a filter, with paths relative to the filter (prefix them with "filter"). */
export function filterIssues(filter: unknown): ValidationIssue[] {
  if (!isPlainObject(filter)) return [{ path: [], message: "must be an object of {metadata_key: {operator: value}}" }];
  const tooBig = sizeIssues(filter);
  if (tooBig.length > 0) return tooBig;
  const issues: ValidationIssue[] = [];
  for (const [key, condition] of Object.entries(filter)) {
    if (characterCount(key) > FILTER_LIMITS.keyLength) {
      issues.push({ path: [key], message: `metadata keys are at most ${FILTER_LIMITS.keyLength} characters (this one has ${characterCount(key)})` });
      continue;
    }
    if (LOGICAL_OPERATORS.has(key) && !holdsOperators(condition)) {
      issues.push({
        path: [key],
        message: `logical operators are not supported: a filter's keys all apply (AND), and there is no ${key}; e.g. {"lang": {"$eq": "en"}, "year": {"$gte": 2024}}`,
      });
      continue;
    }
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
        else if (value.length > FILTER_LIMITS.listValues) {
          issues.push({ path, message: `must have at most ${FILTER_LIMITS.listValues} values (this one has ${value.length})` });
        } else {
          value.forEach((item, i) => {
            const problem = valueIssue(item);
            if (problem) issues.push({ path: [...path, i], message: problem });
          });
        }
      } else if (RANGE_OPERATORS.has(op)) {
        if (!(typeof value === "number" && Number.isFinite(value)) && isoInstant(value) === null) {
          issues.push({ path, message: "must be a number or an ISO 8601 date (e.g. 2024-05-01 or 2024-05-01T12:00:00Z)" });
        }
      } else {
        const problem = valueIssue(value);
        if (problem) issues.push({ path, message: problem });
      }
    }
  }
  return issues;
}

/**
 * The values a condition accepts, looked up in constant time: the scalars themselves (a Set keeps 1 and "1"
 * apart) and the instants of those that are ISO dates.
 */
interface Expected {
  values: Set<Scalar>;
  instants: Set<number>;
}

function expectedOf(values: Scalar[]): Expected {
  const instants = new Set<number>();
  for (const value of values) {
    const instant = isoInstant(value);
    if (instant !== null) instants.add(instant);
  }
  return { values: new Set(values), instants };
}

/**
 * Whether the metadata value, or any element of it when it is an array, is one of the expected values. Only
 * the array's own elements are looked at: an array inside it ([[1], 2]) is an element that matches nothing.
 */
function matches(actual: unknown, expected: Expected): boolean {
  return Array.isArray(actual) ? actual.some((item) => matchesScalar(item, expected)) : matchesScalar(actual, expected);
}

function matchesScalar(actual: unknown, expected: Expected): boolean {
  if (expected.values.has(actual as Scalar)) return true;
  if (expected.instants.size === 0) return false;
  const instant = isoInstant(actual);
  return instant !== null && expected.instants.has(instant);
}

/** <0, 0, >0 for comparable values (number/number, date/date); null when they do not compare. */
function comparator(bound: number | string): (actual: unknown) => number | null {
  if (typeof bound === "number") return (actual) => (typeof actual === "number" ? actual - bound : null);
  const boundInstant = isoInstant(bound)!;
  return (actual) => {
    const instant = isoInstant(actual);
    return instant === null ? null : instant - boundInstant;
  };
}

const RANGE_TESTS: Record<string, (c: number) => boolean> = {
  $gt: (c) => c > 0,
  $gte: (c) => c >= 0,
  $lt: (c) => c < 0,
  $lte: (c) => c <= 0,
};

/** A condition's test, with everything that depends only on the filter worked out once. */
function condition(op: Operator, operand: unknown): (actual: unknown) => boolean {
  switch (op) {
    case "$eq":
    case "$in": {
      const expected = expectedOf(op === "$eq" ? [operand as Scalar] : (operand as Scalar[]));
      return (actual) => matches(actual, expected);
    }
    case "$ne":
    case "$nin": {
      const expected = expectedOf(op === "$ne" ? [operand as Scalar] : (operand as Scalar[]));
      return (actual) => !matches(actual, expected);
    }
    default: {
      const compare = comparator(operand as number | string);
      const test = RANGE_TESTS[op];
      return (actual) => {
        const c = compare(actual);
        return c !== null && test(c);
      };
    }
  }
}

/** The predicate of a filter already checked by filterIssues; compile it once per search. */
export function compileFilter(filter: MetadataFilter): DocumentPredicate {
  const tests: { key: string; test: (actual: unknown) => boolean }[] = [];
  for (const [key, ops] of Object.entries(filter)) {
    for (const [op, value] of Object.entries(ops)) tests.push({ key, test: condition(op as Operator, value) });
  }
  return (metadata) => tests.every(({ key, test }) => test(Object.hasOwn(metadata, key) ? metadata[key] : undefined));
}
