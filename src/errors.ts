// Errors every layer may throw. The HTTP layer turns them into the {error:{code,message,details}} envelope;
// nothing here knows about HTTP frameworks.

export type ErrorCode =
  | "VALIDATION_ERROR"
  | "AUTHENTICATION_ERROR"
  | "NOT_FOUND"
  | "CONFLICT"
  | "RATE_LIMIT_EXCEEDED"
  | "USAGE_LIMIT_EXCEEDED"
  | "EXTERNAL_SERVICE_ERROR"
  | "INTERNAL_ERROR";

export const STATUS_BY_CODE: Record<ErrorCode, number> = {
  VALIDATION_ERROR: 400,
  AUTHENTICATION_ERROR: 401,
  NOT_FOUND: 404,
  CONFLICT: 409,
  RATE_LIMIT_EXCEEDED: 429,
  USAGE_LIMIT_EXCEEDED: 429,
  EXTERNAL_SERVICE_ERROR: 503,
  INTERNAL_ERROR: 500,
};

export interface ValidationIssue {
  path: (string | number)[];
  message: string;
}

export class QuarryError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "QuarryError";
  }

  get status(): number {
    return STATUS_BY_CODE[this.code];
  }
}

export function validationError(issues: ValidationIssue[], message = "Request validation failed"): QuarryError {
  return new QuarryError("VALIDATION_ERROR", message, { issues });
}

/** One-issue validation error: `invalid(["limit"], "must be at most 100")`. */
export function invalid(path: (string | number)[], message: string): QuarryError {
  return validationError([{ path, message }], `${path.join(".") || "request"}: ${message}`);
}

/** `notFound("Knowledge base", id)` → "Knowledge base not found: kb_…" */
export function notFound(resource: string, id: string): QuarryError {
  return new QuarryError("NOT_FOUND", `${resource} not found: ${id}`);
}

export function usageLimitExceeded(message: string, details: Record<string, unknown>): QuarryError {
  return new QuarryError("USAGE_LIMIT_EXCEEDED", message, details);
}
