import type { ParsedDocument } from "./parsers/types.ts";
import { CJK_SCRIPTS, DICTIONARY_SCRIPTS } from "../characters.ts";

// Splits a parsed document into chunks for embedding and keyword search.
//
// The document becomes a stream of units: heading lines, then sentences (lines, for tables and
// lists), and word runs for sentences too long to fit a chunk. Each unit is counted once, and
// chunks are packed from units by summing their counts. Rules:
// - A heading starts a new chunk unless the chunk so far holds only headings: sections are never merged,
//   however small, so that a chunk's sectionHeading is the heading all of its text is under (a heading
//   with no text of its own goes with the section after it); text before a document's first heading
//   has none.
// - A change of section metadata (another slide or sheet) always starts a new chunk.
// - Otherwise a chunk grows to targetTokens (never beyond maxTokens). When what is left of its
//   section fits under maxTokens, it takes that too; else, when it stops inside a paragraph and a
//   paragraph boundary lies past minTokens, it ends at that boundary instead.
// - Consecutive chunks of the same section overlap by about overlapRatio of the earlier chunk:
//   its last whole sentences, or its last words when one sentence is longer than that.
// Words are never split, except a single "word" longer than maxTokens (a URL or base64 blob).

export interface ChunkDraft {
  text: string;
  chunkIndex: number;
  /** Null for text formats (the caller decides how to present that). */
  startPage: number | null;
  endPage: number | null;
  sectionHeading: string;
  tokenCount: number;
  /** Section metadata, e.g. { sheet: "Q1" } or { slide: 3 }. */
  metadata: Record<string, unknown>;
}

export interface ChunkOptions {
  targetTokens?: number;
  maxTokens?: number;
  minTokens?: number;
  overlapRatio?: number;
}

interface Unit {
  text: string;
  /** Its own tokens and its separator's (joinTokens). */
  tokens: number;
  /** What writing the separator before it adds to the model's count (joinCounter). */
  joinTokens: number;
  /** What joins this unit to the one before it in a chunk. */
  /** "" where it goes on without a space: after a CJK full stop, or inside a word cut in pieces. */
  separator: "" | " " | "\n" | "\n\n";
  page: number | null;
  heading: string;
  meta: Record<string, unknown> | undefined;
  metaKey: string;
  /** First unit under a new heading (or new slide/sheet). */
  startsSection: boolean;
  isHeading: boolean;
  startsParagraph: boolean;
}

/**
 * Whitespace after a full stop, perhaps closed by up to 4 quotes or brackets (`."')`), or after a CJK full
 * stop. The closers are bounded: with `*`, the lookbehind scanned back over a whole run of them at every
 * position, so 64K ')' in a row took 2.8 s to split and 256K about a minute (quadratic).
 */
const SENTENCE_BREAK = /(?<=[.!?…]["'”’)\]]{0,4})\s+|(?<=[。！？])/u;
const CJK_FULL_STOP_AT_END = /[。！？]$/u;
const INDENT = /^[ \t]*/;

/**
 * Characters of scripts written without spaces between words, and emoji (a flag's two letters too). A tokenizer without pieces for a
 * script may count a whole run of it as one unknown token (the default model counts 1,000 "中" as 2, 3,000
 * "😀" as 2), which let a chunk of Chinese, Thai or emoji grow to tens of thousands of characters; each of
 * these counts as a token at least. (English runs 2.5-7 characters a token: 8,619 sentences of the
 * evaluation collections.)
 */
const UNSPACED_SCRIPT = new RegExp(`[${CJK_SCRIPTS}${DICTIONARY_SCRIPTS}\\p{Extended_Pictographic}\\p{Regional_Indicator}]`, "gu");

function unspacedCharacters(text: string): number {
  return text.match(UNSPACED_SCRIPT)?.length ?? 0;
}

/**
 * Longest text given to countTokens in one piece. Tokenizing a much longer run at once costs memory out
 * of all proportion (a 1 MB line without sentence breaks took 1.5 GB; a 1 MB base64 blob overflowed the
 * tokenizer's stack), so a longer sentence is counted word by word and a longer word in slices.
 */
const MAX_COUNTED_CHARS = 8192;

export function chunkDocument(doc: ParsedDocument, modelTokens: (text: string) => number, opts: ChunkOptions = {}): ChunkDraft[] {
  const countTokens = (text: string) => Math.max(modelTokens(text), unspacedCharacters(text));
  const maxTokens = opts.maxTokens ?? 512;
  const targetTokens = Math.min(opts.targetTokens ?? 384, maxTokens);
  const minTokens = Math.min(opts.minTokens ?? Math.round(targetTokens * 2 / 3), targetTokens);
  const overlapRatio = opts.overlapRatio ?? 0.15;
  const units = toUnits(doc, countTokens, maxTokens, targetTokens);

  const chunks: ChunkDraft[] = [];
  let overlap: Unit[] = [];
  let i = 0;
  while (i < units.length) {
    let total = sumTokens(overlap);
    if (total > 0 && total + units[i]!.tokens > maxTokens) {
      overlap = [];
      total = 0;
    }
    const start = i;
    let paragraphCut = -1;
    let stoppedForSize = false;
    let hasText = false;
    for (; i < units.length; i++) {
      const unit = units[i]!;
      if (i > start) {
        if (unit.metaKey !== units[i - 1]!.metaKey) break;
        if (unit.startsSection && hasText) break;
        if (total >= targetTokens || total + unit.tokens > maxTokens) {
          stoppedForSize = true;
          break;
        }
        if (unit.startsParagraph && total >= minTokens) paragraphCut = i;
      }
      total += unit.tokens;
      hasText ||= !unit.isHeading;
    }
    if (stoppedForSize) {
      // A section's last sentences stay with the rest of it when they fit, rather than open a chunk of their
      // own that would hold little more than the overlap.
      const end = restOfSectionEnd(units, i, maxTokens - total);
      if (end !== null) i = end;
      else if (!units[i]!.startsParagraph && paragraphCut > start) i = paragraphCut;
    }
    // A heading belongs with the text under it, not at the end of the chunk before.
    if (i < units.length && i - start > 1 && units[i - 1]!.isHeading) i--;

    const own = units.slice(start, i);
    chunks.push(toChunk([...overlap, ...own], own, chunks.length));
    const next = units[i];
    const sameSection = next !== undefined && !next.startsSection && next.metaKey === own[0]!.metaKey;
    overlap = sameSection ? tailOverlap(own, Math.floor(sumTokens(own) * overlapRatio), countTokens) : [];
  }
  return chunks;
}

/**
 * Where the section of the unit before `from` ends (the next unit that starts a section, slide or sheet)
 * when the units up to there hold at most `room` tokens; null when they hold more. Stops counting there.
 */
function restOfSectionEnd(units: Unit[], from: number, room: number): number | null {
  const { metaKey } = units[from - 1]!;
  let tokens = 0;
  let end = from;
  for (; end < units.length && !units[end]!.startsSection && units[end]!.metaKey === metaKey; end++) {
    tokens += units[end]!.tokens;
    if (tokens > room) return null;
  }
  return end;
}

/**
 * What writing `separator` before `text` adds to the model's count of the two. A space adds nothing. A line
 * break is a token of its own to SentencePiece (the default model), and it keeps the next word from taking
 * the ▁ before it, which can cut that word into more pieces ("it.\n\nParagraph": 2 more than "it. Paragraph",
 * "word\nWord" 3). Only that first word is affected: it is counted again after a stand-in word, "x".
 */
function joinCounter(countTokens: (text: string) => number): (separator: Unit["separator"], text: string) => number {
  const standIn = countTokens("x");
  return (separator, text) => {
    if (separator !== "\n" && separator !== "\n\n") return 0;
    const space = text.indexOf(" ");
    const word = space < 0 ? text : text.slice(0, space);
    return Math.max(0, countTokens(`x${separator}${word}`) - standIn - countTokens(word));
  };
}

function toUnits(doc: ParsedDocument, countTokens: (text: string) => number, maxTokens: number, pieceTokens: number): Unit[] {
  const joinTokensOf = joinCounter(countTokens);
  const units: Unit[] = [];
  let previousHeading: string | undefined;
  let previousMetaKey: string | undefined;
  for (const section of doc.sections) {
    const metaKey = section.meta ? JSON.stringify(section.meta) : "";
    const base = { page: section.page, heading: section.heading, meta: section.meta, metaKey };
    let startsSection = section.heading !== previousHeading || metaKey !== previousMetaKey;
    previousHeading = section.heading;
    previousMetaKey = metaKey;
    const heading = normalize(section.heading);
    if (startsSection && heading !== "") {
      const join = joinTokensOf("\n\n", heading);
      units.push({ ...base, text: heading, tokens: countTokens(heading) + join, joinTokens: join, separator: "\n\n", startsSection, isHeading: true, startsParagraph: true });
      startsSection = false;
    }
    for (const [p, paragraph] of section.text.split(/\n\s*\n/).entries()) {
      // A paragraph running over a page break goes on after a space, and is still one paragraph.
      let separator: Unit["separator"] = p === 0 && section.continuesParagraph && units.length > 0 ? " " : "\n\n";
      for (const line of paragraph.split("\n")) {
        // Whether the sentence before ended at a CJK full stop with nothing after it: the break left no space to keep.
        let glued = false;
        // Only code's lines start with spaces or tabs (the parsers clean every other line): kept, as Python's
        // meaning hangs on them.
        let indent = INDENT.exec(line)![0];
        for (const part of normalize(line).split(SENTENCE_BREAK)) {
          const sentence = part.trimStart();
          if (sentence === "") continue;
          const text = indent + sentence;
          indent = "";
          const tokens = text.length > MAX_COUNTED_CHARS ? Infinity : countTokens(text);
          const pieces = tokens > maxTokens ? splitByWords(sentence, pieceTokens, maxTokens, countTokens) : [{ text, tokens, glued: false }];
          for (const [k, piece] of pieces.entries()) {
            const tight = k === 0 ? glued && sentence === part : piece.glued;
            const join = joinTokensOf(tight ? "" : separator, piece.text);
            units.push({
              ...base,
              text: piece.text,
              tokens: piece.tokens + join,
              joinTokens: join,
              separator: tight ? "" : separator,
              startsSection,
              isHeading: false,
              startsParagraph: separator === "\n\n",
            });
            startsSection = false;
            separator = " ";
          }
          glued = CJK_FULL_STOP_AT_END.test(sentence);
        }
        if (separator === " ") separator = "\n";
      }
    }
  }
  return units;
}

/**
 * Word runs of up to pieceTokens each, for a sentence too long for one chunk. The parts of a word cut in
 * pieces join without a space; `glued`: the piece goes on with the word the one before it ended in.
 */
function splitByWords(sentence: string, pieceTokens: number, maxTokens: number, countTokens: (text: string) => number) {
  const pieces: { text: string; tokens: number; glued: boolean }[] = [];
  let text = "";
  let tokens = 0;
  let glued = false;
  for (const word of sentence.split(" ")) {
    splitOversizedWord(word, maxTokens, countTokens).forEach((part, k) => {
      if (tokens > 0 && tokens + part.tokens > pieceTokens) {
        pieces.push({ text, tokens, glued });
        [text, tokens, glued] = ["", 0, k > 0];
      }
      text += text === "" || k > 0 ? part.text : ` ${part.text}`;
      tokens += part.tokens;
    });
  }
  if (text !== "") pieces.push({ text, tokens, glued });
  return pieces;
}

/**
 * The one place a word is cut: when it alone exceeds maxTokens (or MAX_COUNTED_CHARS, which is far more).
 * Only between characters as the reader sees them (graphemePieces): cut between two UTF-16 units, an emoji or
 * a CJK character of the supplementary planes was stored as two U+FFFD, one in each chunk.
 */
function splitOversizedWord(word: string, maxTokens: number, countTokens: (text: string) => number): { text: string; tokens: number }[] {
  if (word.length <= MAX_COUNTED_CHARS) return splitCountableWord(word, maxTokens, countTokens);
  return graphemePieces(word, MAX_COUNTED_CHARS).flatMap((piece) => splitCountableWord(piece, maxTokens, countTokens));
}

function splitCountableWord(word: string, maxTokens: number, countTokens: (text: string) => number): { text: string; tokens: number }[] {
  const tokens = countTokens(word);
  if (tokens <= maxTokens) return [{ text: word, tokens }];
  const partLength = Math.max(1, Math.floor((word.length * maxTokens) / tokens / 2));
  return graphemePieces(word, partLength).map((text) => ({ text, tokens: countTokens(text) }));
}

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
/** How far around a cut graphemePieces reads: further than any but a contrived grapheme (zalgo). */
const GRAPHEME_WINDOW = 32;

/**
 * `word` in pieces of about `length` UTF-16 units, each cut at the first boundary between graphemes (a letter
 * and its marks, a surrogate pair, an emoji sequence, a flag's two letters, a Thai syllable) at or past it.
 * The boundary is found in a window around the cut (segmenting a whole 10 MB word took 10 s); a flag's letters
 * pair up from the start of their run, which a window may not see, so the run is counted as the word is read.
 */
function graphemePieces(word: string, length: number): string[] {
  const pieces: string[] = [];
  let read = 0; // how far the regional indicators have been counted
  let indicators = 0; // in the run that ends at `read`
  const indicatorsBefore = (at: number) => {
    while (read < at) {
      const point = word.codePointAt(read)!;
      indicators = isRegionalIndicator(point) ? indicators + 1 : 0;
      read += point > 0xffff ? 2 : 1;
    }
    return indicators;
  };
  for (let start = 0; start < word.length; ) {
    let end = graphemeEnd(word, start + length);
    if (end < word.length && isRegionalIndicator(word.codePointAt(end)!) && indicatorsBefore(end) % 2 === 1) end += 2;
    pieces.push(word.slice(start, end));
    start = end;
  }
  return pieces;
}

/** The first grapheme boundary at or after `at` in a window around it; past the window, at least not inside a pair. */
function graphemeEnd(text: string, at: number): number {
  if (at >= text.length) return text.length;
  const from = Math.max(0, at - GRAPHEME_WINDOW);
  for (const { index } of graphemes.segment(text.slice(from, at + GRAPHEME_WINDOW))) if (from + index >= at) return from + index;
  const unit = text.charCodeAt(at);
  return unit >= 0xdc00 && unit <= 0xdfff ? at + 1 : at;
}

/** One of a flag's two letters (🇫🇷 is 🇫 and 🇷). */
function isRegionalIndicator(point: number): boolean {
  return point >= 0x1f1e6 && point <= 0x1f1ff;
}

/** The end of a chunk to repeat at the start of the next: whole sentences, else whole words. */
function tailOverlap(units: Unit[], budget: number, countTokens: (text: string) => number): Unit[] {
  const tail: Unit[] = [];
  let tokens = 0;
  for (let i = units.length - 1; i >= 0; i--) {
    const unit = units[i]!;
    if (unit.isHeading || tokens + unit.tokens > budget) break;
    tail.unshift(unit);
    tokens += unit.tokens;
  }
  if (tail.length > 0) return tail;

  const last = units[units.length - 1]!;
  if (last.isHeading) return [];
  const words = last.text.split(" ");
  let first = words.length;
  for (let i = words.length - 1; i > 0; i--) {
    const wordTokens = countTokens(words[i]!);
    if (tokens + wordTokens > budget) break;
    tokens += wordTokens;
    first = i;
  }
  return first < words.length ? [{ ...last, text: words.slice(first).join(" "), tokens: tokens + last.joinTokens }] : [];
}

/**
 * tokenCount is the sum of the units' counts (their separators' included, joinCounter), the figure the
 * chunk was packed by: re-tokenizing the joined text cost more than all the other counting (1 MB of text:
 * 3.5 s → 1.3 s). Against a recount of the 127 chunks of the shared samples with the default model it is off
 * by 0.07 % on average and by one token at most; without the separators' tokens, 2 % and 19 % (9 tokens).
 */
function toChunk(units: Unit[], own: Unit[], chunkIndex: number): ChunkDraft {
  const first = own[0]!;
  const text = units.map((unit, i) => (i === 0 ? unit.text : unit.separator + unit.text)).join("");
  const pages = units.map((unit) => unit.page).filter((page): page is number => page !== null);
  return {
    text,
    chunkIndex,
    startPage: pages.length > 0 ? Math.min(...pages) : null,
    endPage: pages.length > 0 ? Math.max(...pages) : null,
    sectionHeading: sectionHeadingOf(own),
    // The first unit's separator is not written.
    tokenCount: sumTokens(units) - units[0]!.joinTokens,
    metadata: { ...first.meta },
  };
}

/**
 * The heading of the section `own`'s text is under: its last unit's, as sections are not merged (the
 * headings before that section's have no text of their own). Merged small sections were cited under one
 * heading, the first or the largest: two audits found text cited under a neighbouring section's heading.
 */
function sectionHeadingOf(own: Unit[]): string {
  return own[own.length - 1]!.heading;
}

function sumTokens(units: Unit[]): number {
  return units.reduce((sum, unit) => sum + unit.tokens, 0);
}

function normalize(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
