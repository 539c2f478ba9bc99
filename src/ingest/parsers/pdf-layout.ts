import { cleanLine } from "./text-cleanup.ts";

// Layout analysis for a PDF text layer: positioned text runs → lines → headings and paragraphs.
// Headings are found by font size: short lines set clearly larger than the body text.

/** The fields we use of a pdfjs TextItem (marked-content entries have no `str`). */
export interface PdfTextRun {
  str: string;
  transform: number[];
  width: number;
  hasEOL: boolean;
}

export interface PdfLine {
  text: string;
  /** Largest font size in the line (small-caps headings mix two sizes). */
  size: number;
  /** Set at an angle (margin stamps, rotated table headers): never a heading. */
  rotated: boolean;
  /** Baseline y (PDF coordinates grow upwards). */
  y: number;
}

/** `size`: its first line's font size. */
export type PdfBlock = { kind: "heading" | "paragraph"; text: string; size: number };

const HEADING_MIN_RATIO = 1.15;
const HEADING_MAX_LINES = 3;
const HEADING_MAX_CHARS = 200;

export function runsToLines(items: ReadonlyArray<PdfTextRun | object>): PdfLine[] {
  const lines: PdfLine[] = [];
  let text = "";
  let size = 0;
  let rotated = false;
  let y = 0;
  let endX = 0;

  const endLine = () => {
    const trimmed = text.trim();
    if (trimmed !== "") lines.push({ text: trimmed, size, rotated, y });
    text = "";
    size = 0;
  };

  for (const item of items) {
    if (!("str" in item)) continue;
    const [a = 0, b = 0, c = 0, d = 0, x = 0, itemY = 0] = item.transform;
    const itemSize = Math.hypot(c, d);
    if (text !== "" && Math.abs(itemY - y) > Math.max(itemSize, size) * 0.5) endLine();
    if (item.str.trim() !== "") {
      if (text === "") {
        y = itemY;
        rotated = Math.abs(b) > Math.abs(a);
      }
      // Runs are often positioned apart without a space character between them.
      else if (x - endX > itemSize * 0.15 && !/\s$/.test(text) && !/^\s/.test(item.str)) text += " ";
      text += item.str;
      size = Math.max(size, itemSize);
      endX = x + item.width;
    } else if (text !== "") text += item.str;
    if (item.hasEOL) endLine();
  }
  endLine();
  return lines;
}

/** The font size most of the characters are set in, over all pages. */
export function bodyFontSize(pages: PdfLine[][]): number {
  const charsBySize = new Map<number, number>();
  for (const line of pages.flat()) {
    const size = Math.round(line.size * 2) / 2;
    charsBySize.set(size, (charsBySize.get(size) ?? 0) + line.text.length);
  }
  let body = 0;
  let most = -1;
  for (const [size, chars] of charsBySize) if (chars > most) [body, most] = [size, chars];
  return body;
}

/** How many lines at the top and at the bottom of a page may be running headers or footers. */
const EDGE_LINES = 2;
/** A running header or footer recurs on at least this share of the pages, and on 3 at least. */
const RUNNING_MIN_SHARE = 0.5;

/**
 * The pages without their running headers and footers ("ACME CONFIDENTIAL", a journal's name and
 * volume): a line among the top or bottom EDGE_LINES of its page whose text, numbers aside, stands
 * there on at least half the pages. Left in, they were indexed once a page, often mid-sentence. A page
 * made only of such lines keeps them: they are its content ("Item 3 costs 12 dollars" alone on each
 * page), and taking them made a readable file fail with no text.
 */
export function withoutRunningLines(pages: PdfLine[][]): PdfLine[][] {
  const key = (line: PdfLine) => line.text.replace(/\d+/g, "#").toLowerCase();
  const edgesOf = (lines: PdfLine[]) => {
    const byHeight = [...lines].sort((a, b) => b.y - a.y);
    return new Set([...byHeight.slice(0, EDGE_LINES), ...byHeight.slice(-EDGE_LINES)]);
  };
  const edges = pages.map(edgesOf);
  const pagesWith = new Map<string, number>();
  for (const pageEdges of edges) for (const text of new Set([...pageEdges].map(key))) pagesWith.set(text, (pagesWith.get(text) ?? 0) + 1);
  const least = Math.max(3, Math.ceil(pages.length * RUNNING_MIN_SHARE));
  return pages.map((lines, index) => {
    const kept = lines.filter((line) => !(edges[index]!.has(line) && pagesWith.get(key(line))! >= least));
    return kept.length > 0 ? kept : lines;
  });
}

const PAGE_NUMBER = /^(page\s+)?\d{1,4}(\s*(of|\/)\s*\d{1,4})?$/i;
/**
 * A numbered subsection heading set at the body's size ("3.1 SETUP", "B.2.1 ReAct trajectory"): two to
 * four levels of numbering, then a capital, in a block of its own line followed by a paragraph. Papers
 * set these in bold, which the text layer does not tell. A top-level number alone ("3 Results") is not
 * enough: numbered list items and table rows look like that; a section of that level is set larger anyway.
 */
const NUMBERED_SUBSECTION = /^(?:\d{1,2}|[A-Z])(?:\.\d{1,2}){1,3}\.?\s+\p{Lu}[^.!?:;]{0,80}$/u;
const SUBSECTION_MAX_WORDS = 10;

/** A one-line paragraph block that reads as a numbered subsection heading, before its next block is known. */
function looksNumbered(block: PdfBlock, lines: number): boolean {
  return block.kind === "paragraph" && lines === 1 && NUMBERED_SUBSECTION.test(block.text) && block.text.split(" ").length <= SUBSECTION_MAX_WORDS;
}

/** A page's blocks in reading order, without a page number printed at its top or bottom. */
export function linesToBlocks(lines: PdfLine[], bodySize: number, hyphenated: ReadonlySet<string>): PdfBlock[] {
  const blocks: PdfBlock[] = [];
  const lineCounts: number[] = [];
  let group: PdfLine[] = [];

  const endGroup = () => {
    if (group.length === 0) return;
    const text = joinLines(group.map((line) => line.text), hyphenated);
    const heading =
      isLarge(group[0]!, bodySize) && group.length <= HEADING_MAX_LINES && text.length <= HEADING_MAX_CHARS && /\p{L}/u.test(text);
    blocks.push({ kind: heading ? "heading" : "paragraph", text, size: group[0]!.size });
    lineCounts.push(group[0]!.rotated ? 0 : group.length);
    group = [];
  };

  for (const line of lines) {
    const previous = group[group.length - 1];
    if (previous && startsNewBlock(previous, line, bodySize)) endGroup();
    group.push(line);
  }
  endGroup();
  // Followed by a paragraph that is not another such line: a table of contents spaced out line by line has no headings.
  const numbered = blocks.map((block, index) => looksNumbered(block, lineCounts[index]!));
  numbered.forEach((candidate, index) => {
    if (candidate && blocks[index + 1]?.kind === "paragraph" && !numbered[index + 1]) blocks[index]!.kind = "heading";
  });
  return blocks.filter((block, index) => !((index === 0 || index === blocks.length - 1) && PAGE_NUMBER.test(block.text)));
}

function isLarge(line: PdfLine, bodySize: number): boolean {
  return !line.rotated && line.size >= bodySize * HEADING_MIN_RATIO && line.size >= bodySize + 1;
}

function startsNewBlock(previous: PdfLine, line: PdfLine, bodySize: number): boolean {
  if (isLarge(previous, bodySize) !== isLarge(line, bodySize)) return true;
  if (Math.abs(previous.size - line.size) > 1) return true;
  const drop = previous.y - line.y;
  // A gap well beyond normal line spacing, or a jump back up the page (next column).
  return drop > previous.size * 1.8 || drop < -previous.size * 0.5;
}

/** The hyphenated words written whole on a line somewhere in the document ("prompt-based"), lower-cased. */
export function hyphenatedWords(pages: PdfLine[][]): Set<string> {
  const words = new Set<string>();
  for (const line of pages.flat()) for (const [word] of line.text.matchAll(HYPHENATED_WORD)) words.add(word.toLowerCase());
  return words;
}

const HYPHENATED_WORD = /[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)+/gu;
/** The word a line ends in, with its hyphen: "chain-of-" in "… reasoning via chain-of-". */
const HYPHEN_AT_END = /([\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)*)-$/u;
const WORD_AT_START = /^[\p{L}\p{N}]+/u;

/**
 * Joins wrapped lines. A line ending in a hyphen goes on without a space: the hyphen is dropped where
 * it only broke a word ("exam-" + "ple" → "example") and kept in a compound: after a part that has a
 * hyphen already ("chain-of-" + "thought"), before a capital or a digit ("PaLM-" + "540B"), and where
 * the document writes the whole compound on one line elsewhere ("prompt-" + "based", with "prompt-based"
 * in `hyphenated`). All three lost their hyphen or kept a space after it ("chain-ofthought", "PaLM- 540B").
 */
function joinLines(lines: string[], hyphenated: ReadonlySet<string>): string {
  let text = "";
  for (const line of lines) {
    // Only the line's end is looked at: a word longer than that is no compound anyone searches for.
    const end = text.endsWith("-") ? HYPHEN_AT_END.exec(text.slice(-64)) : null;
    if (text === "") text = line;
    else if (!end || !/^[\p{L}\p{N}]/u.test(line)) text += ` ${line}`;
    else {
      const compound = `${end[1]}-${WORD_AT_START.exec(line)![0]}`.toLowerCase();
      const keepHyphen = end[1]!.includes("-") || !/^\p{Ll}/u.test(line) || hyphenated.has(compound);
      text = (keepHyphen ? text : text.slice(0, -1)) + line;
    }
  }
  return cleanLine(text);
}
