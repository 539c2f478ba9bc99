// Validation messages in the service's own words ("must be at most 256 characters", "is required") in place
// of zod's ("Too big: expected string to have <=256 characters", "Invalid input: expected string, received
// undefined"), for every schema in the process. A check that states its own message keeps it.
import { z } from "zod";

/** What a size is counted in, by the kind of value checked. */
const UNITS: Record<string, [one: string, many: string]> = {
  string: ["character", "characters"],
  array: ["item", "items"],
  set: ["item", "items"],
  file: ["byte", "bytes"],
};

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  object: "a JSON object",
  array: "an array",
  date: "a date",
};

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}

function sizeBound(side: "least" | "most", origin: string, limit: number | bigint, inclusive: boolean | undefined): string {
  const unit = UNITS[origin];
  if (unit) {
    const count = inclusive === false ? (side === "least" ? Number(limit) + 1 : Number(limit) - 1) : Number(limit);
    if (origin === "string" && side === "least" && count === 1) return "must not be empty";
    return `must ${origin === "string" ? "be" : "have"} at ${side} ${count} ${count === 1 ? unit[0] : unit[1]}`;
  }
  if (inclusive === false) return `must be ${side === "least" ? "greater" : "less"} than ${limit}`;
  return `must be at ${side} ${limit}`;
}

export function validationMessage(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "is required";
      // JSON.parse reads 1e400 as Infinity, which zod takes for a wrong type: "must be a number, not a number".
      if (typeof issue.input === "number" && !Number.isFinite(issue.input)) return "must be a finite number";
      if (issue.expected === "int" && typeof issue.input === "number") return "must be a whole number";
      return `must be ${TYPE_NAMES[issue.expected] ?? issue.expected}, not ${kindOf(issue.input)}`;
    case "too_small":
      return sizeBound("least", issue.origin, issue.minimum, issue.inclusive);
    case "too_big":
      return sizeBound("most", issue.origin, issue.maximum, issue.inclusive);
    case "invalid_value":
      if (issue.input === undefined) return "is required";
      return `must be ${issue.values.length === 1 ? "" : "one of "}${issue.values.map((value) => JSON.stringify(value)).join(", ")}`;
    default:
      return undefined; // zod's own
  }
}

z.config({ customError: validationMessage });
