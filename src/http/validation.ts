// Turns zod issues into the service's VALIDATION_ERROR issues (path as an array, one item per problem).
import type { ZodType } from "zod";
import { validationError, type ValidationIssue } from "../errors.ts";

interface ZodLikeIssue {
  path: PropertyKey[];
  message: string;
}

export function toIssues(issues: readonly ZodLikeIssue[], prefix: (string | number)[] = []): ValidationIssue[] {
  return issues.map((i) => ({
    path: [...prefix, ...i.path.map((p) => (typeof p === "number" ? p : String(p)))],
    message: i.message,
  }));
}

/** Validates a value with a zod schema, throwing a 400 VALIDATION_ERROR that lists every problem. */
export function parseWith<T>(schema: ZodType<T>, value: unknown, prefix: (string | number)[] = []): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw validationError(toIssues(result.error.issues, prefix), summarize(result.error.issues, prefix));
}

export function summarize(issues: readonly ZodLikeIssue[], prefix: (string | number)[] = []): string {
  const first = issues[0];
  if (!first) return "Request validation failed";
  const path = [...prefix, ...first.path.map(String)].join(".");
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : "";
  return `${path ? `${path}: ` : ""}${first.message}${more}`;
}
