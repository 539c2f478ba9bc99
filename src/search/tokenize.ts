// Text → keyword terms, the same way for passages and queries: lower case, diacritics removed, split on
// anything that is not a letter or digit, stopwords dropped, English words stemmed (Snowball/Porter2).
// Scripts written without spaces between words: runs of Chinese, Japanese or Korean become their characters
// and overlapping character pairs; Thai, Lao, Khmer and Burmese are split into words by ICU's dictionaries.
// Any input is safe: query syntax characters are just separators here.
import stem from "wink-porter2-stemmer";
import { ENGLISH_STOPWORDS } from "./stopwords.ts";
import { CJK_SCRIPTS, DICTIONARY_SCRIPTS, INVISIBLE } from "../characters.ts";

/** Letters and digits, with the marks kept inside words (MARKS). */
const WORD = /[\p{L}\p{N}][\p{L}\p{N}\p{M}]*/gu;
/** Kana's prolonged sound mark (ー) is of no script of its own, but part of Japanese words. */
const CJK_CLASS = `${CJK_SCRIPTS}\\u30fc`;
const CJK = new RegExp(`[${CJK_CLASS}]`, "u");
const CJK_RUNS = new RegExp(`[${CJK_CLASS}]+|[^${CJK_CLASS}]+`, "gu");
/** Scripts whose words ICU finds (Intl.Segmenter); their vowel signs and tone marks tell words apart, so are kept. */
const SEGMENTED = new RegExp(`[${DICTIONARY_SCRIPTS}]`, "u");
/** Splits around those runs, keeping them: odd parts are the runs. */
const AROUND_SEGMENTED = new RegExp(`([${DICTIONARY_SCRIPTS}]+)`, "u");
const WORDS = new Intl.Segmenter("th", { granularity: "word" });
const NON_ASCII = /[^\x00-\x7f]/;
/**
 * Combining marks, but for kana's voicing marks (で is not て) and the vowel signs of the scripts of India
 * and Sri Lanka, which are letters there, not accents: stripped, काम (work) and कम (less) were one term.
 */
const MARKS = /(?:(?![\u3099\u309a])(?![\p{sc=Deva}\p{sc=Beng}\p{sc=Guru}\p{sc=Gujr}\p{sc=Orya}\p{sc=Taml}\p{sc=Telu}\p{sc=Knda}\p{sc=Mlym}\p{sc=Sinh}])\p{M})+/gu;
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

/**
 * Each character and each pair: pairs rank multi-character words (東京) above their characters found apart,
 * and characters find one-character words (猫, 水) and a word's part (東 in 東京).
 */
function pushCjk(run: string, out: string[]): void {
  const chars = Array.from(run);
  for (let i = 0; i < chars.length; i++) {
    out.push(chars[i]);
    if (i + 1 < chars.length) out.push(chars[i] + chars[i + 1]);
  }
}

function pushSegmented(run: string, out: string[]): void {
  for (const { segment, isWordLike } of WORDS.segment(run)) {
    if (isWordLike) out.push(cut(segment.normalize("NFKC")));
  }
}

function pushWord(word: string, out: string[]): void {
  if (ENGLISH_STOPWORDS.has(word)) return;
  out.push(stemOf(cut(word)));
}

function cut(term: string): string {
  return term.length > MAX_TERM_LENGTH ? term.slice(0, MAX_TERM_LENGTH) : term;
}

/**
 * Latin letters that are not a base letter with a mark, so NFKD leaves them: spelled as in ASCII, as a
 * keyboard without them would type them (Straße, Øresund, Łódź, encyclopædia, œuvre, Diyarbakır).
 */
const LETTER_SPELLINGS: Record<string, string> = { ß: "ss", ø: "o", ł: "l", æ: "ae", œ: "oe", ı: "i", đ: "d", ð: "d", þ: "th", ħ: "h" };
const SPELLED_LETTERS = new RegExp(`[${Object.keys(LETTER_SPELLINGS).join("")}]`, "g");

/** Diacritics removed, then words and CJK runs. NFC puts back what NFKD took apart and is kept: kana, Hangul syllables. */
function pushFolded(text: string, out: string[]): void {
  const folded = text
    .replace(SPELLED_LETTERS, (letter) => LETTER_SPELLINGS[letter]!)
    .normalize("NFKD")
    .replace(MARKS, "")
    .normalize("NFC");
  for (const word of folded.match(WORD) ?? []) {
    if (!CJK.test(word)) pushWord(word, out);
    else for (const part of word.match(CJK_RUNS)!) (CJK.test(part) ? pushCjk : pushWord)(part, out);
  }
}

/**
 * Numbers with dots, commas or dashes inside, and versions ("3.14", "10,000", "192.168.1.10", "2024-01-05",
 * "v1.2.3"): besides their parts, one term of the whole, so that "3.2.1" ranks the text that has it above one
 * with "1.2.3", and "10000" finds "10,000" (commas of thousands dropped; other commas read as dots). Words
 * joined by a hyphen get no such term: "e-mail" as "email" cost MED 0.010 of keyword nDCG@10 (bench:quality).
 */
const NUMBERISH = /[\p{L}\p{N}]+(?:[-.,][\p{L}\p{N}]+)+/gu;
const DOTTED_NUMBER = /^\p{N}+(?:[.,]\p{N}+)+$/u;
const THOUSANDS = /^\p{N}{1,3}(?:,\p{N}{3})+(?:\.\p{N}+)?$/u;
const DASHED_NUMBER = /^\p{N}+(?:-\p{N}+)+$/u;
/** A version or name with dots and a digit: "v1.2.3", "python3.11" (not "e.g", not a sentence's end). */
const DOTTED_VERSION = /^(?=.*\p{N})[\p{L}\p{N}]+(?:\.[\p{L}\p{N}]+)+$/u;

function pushNumbers(text: string, out: string[]): void {
  for (const [whole] of text.matchAll(NUMBERISH)) {
    if (DOTTED_NUMBER.test(whole)) out.push(cut(THOUSANDS.test(whole) ? whole.replaceAll(",", "") : whole.replaceAll(",", ".")));
    else if (DOTTED_VERSION.test(whole) || DASHED_NUMBER.test(whole)) out.push(cut(whole));
  }
}

/** The keyword terms of a text, in order, repeats kept (term frequency counts them). */
export function keywordTerms(text: string): string[] {
  const lower = text.toLowerCase().replace(INVISIBLE, "");
  const out: string[] = [];
  if (!NON_ASCII.test(lower)) for (const word of lower.match(WORD) ?? []) pushWord(word, out);
  else if (!SEGMENTED.test(lower)) pushFolded(lower, out);
  else lower.split(AROUND_SEGMENTED).forEach((part, i) => (i % 2 === 1 ? pushSegmented(part, out) : pushFolded(part, out)));
  pushNumbers(lower, out);
  return out;
}
