// Text → keyword terms, the same way for passages and queries: lower case, diacritics removed, split on
// anything that is not a letter or digit, stopwords dropped, English words stemmed (Snowball/Porter2).
// Runs of Chinese, Japanese or Korean script, which have no spaces, become overlapping character pairs.
// Any input is safe: query syntax characters are just separators here.
import stem from "wink-porter2-stemmer";
import { ENGLISH_STOPWORDS } from "./stopwords.ts";

const WORD = /[\p{L}\p{N}]+/gu;
const CJK_CLASS = "\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}\\u30fc";
const CJK = new RegExp(`[${CJK_CLASS}]`, "u");
const CJK_RUNS = new RegExp(`[${CJK_CLASS}]+|[^${CJK_CLASS}]+`, "gu");
const NON_ASCII = /[^\x00-\x7f]/;
const MARKS = /\p{M}+/gu;
/** Longer tokens are noise (ids, base64); they are cut so the index cannot balloon. */
const MAX_TERM_LENGTH = 64;
const STEM_CACHE_LIMIT = 200_000;

const stems = new Map<string, string>();

function stemOf(word: string): string {
  let stemmed = stems.get(word);
  if (stemmed === undefined) {
    stemmed = /^[a-z]+$/.test(word) ? stem(word) : word;
    if (stems.size >= STEM_CACHE_LIMIT) stems.clear();
    stems.set(word, stemmed);
  }
  return stemmed;
}

function pushCjk(run: string, out: string[]): void {
  const chars = Array.from(run);
  if (chars.length === 1) out.push(chars[0]);
  for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i] + chars[i + 1]);
}

function pushWord(word: string, out: string[]): void {
  if (ENGLISH_STOPWORDS.has(word)) return;
  out.push(stemOf(word.length > MAX_TERM_LENGTH ? word.slice(0, MAX_TERM_LENGTH) : word));
}

/** The keyword terms of a text, in order, repeats kept (term frequency counts them). */
export function keywordTerms(text: string): string[] {
  let normalized = text.toLowerCase();
  const ascii = !NON_ASCII.test(normalized);
  if (!ascii) normalized = normalized.normalize("NFKD").replace(MARKS, "");
  const out: string[] = [];
  for (const word of normalized.match(WORD) ?? []) {
    if (ascii || !CJK.test(word)) pushWord(word, out);
    else for (const part of word.match(CJK_RUNS)!) (CJK.test(part) ? pushCjk : pushWord)(part, out);
  }
  return out;
}
