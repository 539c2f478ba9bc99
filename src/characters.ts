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

/** A backslash escape in JSON text: a surrogate pair's two, a lone surrogate's, or any other. */
const JSON_ESCAPE = /\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|(u[dD][89a-fA-F][0-9a-fA-F]{2})|[^])/g;
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * JSON text with every escaped lone surrogate ("\ud800" not in a pair) written as U+FFFD, as a well-formed
 * string has none: stored and sent back as it came, it made whole lists unreadable to strict JSON parsers
 * (Rust's serde_json, pydantic's). Names already became U+FFFD on their way into SQLite, metadata did not.
 */
export function withoutLoneSurrogates(json: string): string {
  if (!SURROGATE_ESCAPE.test(json)) return json;
  return json.replace(JSON_ESCAPE, (escape, lone: string | undefined) => (lone ? "\\ufffd" : escape));
}
