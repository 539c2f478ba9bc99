// ISO 8601 dates and date-times as clients write them (filter bounds, webhook events): a date, or a date
// with a time (T or a space; seconds and their fraction optional) and Z, ±hh:mm, ±hhmm or no offset (UTC).

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/;
/** Longer than a date alone: it has a time. */
const DATE_LENGTH = 10;

/** Milliseconds since the epoch when the value is an ISO 8601 date or date-time, else null. */
export function isoInstant(value: unknown): number | null {
  if (typeof value !== "string") return null;
  const match = ISO_DATE.exec(value);
  if (!match) return null;
  // Date.parse rolls a day past the month's end over into the next month (2023-02-30 → March 2).
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (day > daysInMonth(year, month)) return null;
  const withZone = value.length > DATE_LENGTH && !match[4] ? `${value}Z` : value;
  const ms = Date.parse(withZone.replace(" ", "T"));
  return Number.isNaN(ms) ? null : ms;
}

/** Days in a month (1-12) of a year, leap years counted. */
function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** The value as an instant in UTC as toISOString writes it ("2026-12-01T10:00:00.000Z"); null when isoInstant refuses it. */
export function utcIso(value: string): string | null {
  const instant = isoInstant(value);
  return instant === null ? null : new Date(instant).toISOString();
}

/** An ISO 8601 date-time (a date alone is not one). */
export function isIsoDateTime(value: string): boolean {
  return value.length > DATE_LENGTH && isoInstant(value) !== null;
}
