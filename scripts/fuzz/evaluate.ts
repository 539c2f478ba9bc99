// Judges one answer: the error envelope of the spec (§7), no 5xx, an answer at all, and a rejection
// where the spec requires one.
import type { Expectation } from "./case.ts";
import type { FuzzResponse } from "./http.ts";

/** Bodies above this may be cut off by the server once it has answered (e.g. 401 before reading it all). */
const LARGE_REQUEST_BYTES = 1 << 20;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** What is wrong with an error body, or null when it is {error:{code,message,details?}} as the spec says. */
export function envelopeProblem(body: unknown): string | null {
  if (!isObject(body)) return "error body is not a JSON object";
  const error = body.error;
  if (!isObject(error)) return "no error object";
  if (typeof error.code !== "string" || !error.code) return "error.code is not a non-empty string";
  if (typeof error.message !== "string") return "error.message is not a string";
  if ("details" in error && error.details !== undefined && !isObject(error.details)) return "error.details is not an object";
  if (error.code === "VALIDATION_ERROR") {
    const issues = isObject(error.details) ? error.details.issues : undefined;
    if (!Array.isArray(issues)) return "VALIDATION_ERROR without details.issues array";
    if (!issues.every((i) => isObject(i) && Array.isArray(i.path) && typeof i.message === "string")) return "details.issues item without path array and message";
  }
  return null;
}

export type ProblemKind = "http-layer" | "5xx" | "no-response" | "bad-envelope" | "unexpected-status" | "accepted-invalid" | "unsafe-storage-path";

/** Kinds that are reported but are no failure. */
export const NOTES: ProblemKind[] = ["http-layer"];

export interface Problem {
  kind: ProblemKind;
  detail: string;
}

export function judge(response: FuzzResponse, expect: Expectation): Problem[] {
  const problems: Problem[] = [];
  const { status } = response;
  if (status === 0) {
    if (response.requestBytes <= LARGE_REQUEST_BYTES) problems.push({ kind: "no-response", detail: response.error ?? "no response" });
    return problems;
  }
  if (status >= 500) problems.push({ kind: "5xx", detail: `status ${status}` });
  if (status >= 400 && status < 500 && response.text === "" && !response.headers["x-request-id"]) {
    // Bun's HTTP parser refused the request itself (oversized or invalid header bytes) before any
    // application code ran: every answer of the application carries X-Request-Id
    problems.push({ kind: "http-layer", detail: `${status} from Bun's HTTP parser, empty body (no envelope possible)` });
  } else if (status >= 400) {
    const problem = envelopeProblem(response.json);
    if (problem) problems.push({ kind: "bad-envelope", detail: `${status}: ${problem}` });
  } else if (status < 200 || status >= 300) {
    problems.push({ kind: "unexpected-status", detail: `status ${status}` });
  } else if (expect === "reject") {
    problems.push({ kind: "accepted-invalid", detail: `status ${status} for input the spec requires to be rejected` });
  }
  const storagePath = isObject(response.json) && isObject(response.json.data) ? response.json.data.storage_path : undefined;
  if (typeof storagePath === "string" && (storagePath.split(/[\\/]/).includes("..") || storagePath.startsWith("/"))) {
    problems.push({ kind: "unsafe-storage-path", detail: storagePath });
  }
  return problems;
}
