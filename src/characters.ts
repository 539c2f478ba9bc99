// Lengths in characters, as the spec's limits and zod's max() count them: Unicode code points, so that
// an emoji is one character, not the two UTF-16 code units JavaScript's `length` counts.

/** Whether a surrogate pair (one character in two units) starts at `i`; a lone surrogate is one character. */
function pairAt(text: string, i: number): boolean {
  const unit = text.charCodeAt(i);
  if (unit < 0xd800 || unit > 0xdbff || i + 1 >= text.length) return false;
  const next = text.charCodeAt(i + 1);
  return next >= 0xdc00 && next <= 0xdfff;
}

/** The number of code points in `text`. */
export function characterCount(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i += pairAt(text, i) ? 2 : 1) count++;
  return count;
}

/** The first `count` code points of `text` (never half of a pair). */
export function firstCharacters(text: string, count: number): string {
  let end = 0;
  for (let kept = 0; kept < count && end < text.length; kept++) end += pairAt(text, end) ? 2 : 1;
  return text.slice(0, end);
}

/** `text` cut to `length` code points at most, the last of them "…" when it was cut. */
export function cutToLength(text: string, length: number): string {
  return characterCount(text) > length ? `${firstCharacters(text, length - 1)}…` : text;
}

/**
 * Scripts written without spaces between words, as regular-expression class contents: Chinese, Japanese
 * and Korean, whose characters carry meaning one by one, and Thai, Lao, Khmer and Burmese, whose words a
 * dictionary finds. The chunker counts them a token a character at least; keyword search cuts them apart.
 */
export const CJK_SCRIPTS = "\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}";
export const DICTIONARY_SCRIPTS = "\\p{Script=Thai}\\p{Script=Lao}\\p{Script=Khmer}\\p{Script=Myanmar}";

/**
 * Characters that take no room and only tell a renderer how to join or break: soft hyphen, zero-width
 * space, (non-)joiners, word joiner, byte-order mark. Parsed text is cleaned of them, and so are keyword
 * queries, or a query pasted with one (Persian writes ZWNJ inside words) would be cut where its text is not.
 */
export const INVISIBLE = /[\u00ad\u200b\u200c\u200d\u2060\ufeff]/g;

/**
 * Of INVISIBLE, what parsed text and a query to embed are cleaned of: not the joiners (ZWJ, ZWNJ), which are
 * part of how a word is written and kept in the text handed back (the family emoji 👨‍👩‍👧 fell apart into three,
 * Persian's می‌خواهم lost its non-joiner); keyword terms are read without them all.
 */
export const INVISIBLE_NOT_JOINERS = /[\u00ad\u200b\u2060\ufeff]/g;

/** An escaped surrogate in JSON text, lone or in a pair: what may make a string of the parsed value ill-formed. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * JSON.parse, with every lone surrogate in the value's strings and keys replaced by U+FFFD, as a well-formed
 * string has none: stored and sent back as it came, one made whole lists unreadable to strict JSON parsers
 * (Rust's serde_json, pydantic's). Names already became U+FFFD on their way into SQLite, metadata did not.
 * Two keys that differ only there become one, the last value winning, as for any repeated key.
 */
export function parseWellFormedJson(json: string): unknown {
  return wellFormedValueOf(json, JSON.parse(json));
}

/**
 * `value`, parsed from `json` (and no deeper than its checks allow), made well-formed as parseWellFormedJson
 * does. Only text with a surrogate escape is looked through: the check of the strings themselves is native
 * (isWellFormed), where telling a lone escape from a pair's in the text took seconds on long texts.
 */
export function wellFormedValueOf<T>(json: string, value: T): T {
  return SURROGATE_ESCAPE.test(json) ? (wellFormed(value) as T) : value;
}

/** `value` with its strings and keys made well-formed: arrays in place, an object rebuilt if a key changes. */
function wellFormed(value: unknown): unknown {
  if (typeof value === "string") return value.isWellFormed() ? value : value.toWellFormed();
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = wellFormed(value[i]);
    return value;
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object);
  if (keys.every((key) => key.isWellFormed())) {
    for (const key of keys) {
      const item = object[key];
      const fixed = wellFormed(item);
      if (fixed !== item) define(object, key, fixed);
    }
    return object;
  }
  // In the same order, a repeated key keeping its first place and its last value, as JSON.parse does.
  const rebuilt: Record<string, unknown> = {};
  for (const key of keys) define(rebuilt, key.toWellFormed(), wellFormed(object[key]));
  return rebuilt;
}

/** Defined, not assigned: an own "__proto__" key (JSON.parse makes one) would set the prototype instead. */
function define(object: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
}
