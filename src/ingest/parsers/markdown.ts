import { decodeHTMLStrict } from "entities";
import { SectionCollector } from "./section-collector.ts";
import { decodeText } from "./text-decode.ts";
import { cleanLine } from "./text-cleanup.ts";
import type { ParsedDocument } from "./types.ts";

// A light Markdown reader: enough structure for retrieval (headings, paragraphs, list and table
// lines, code text), with inline syntax stripped. Not a CommonMark renderer.
//
// Every pattern here runs in time linear in the line length: a span's content cannot contain its
// own opening delimiter, so a failed match attempt stops at the next opener instead of scanning to
// the end of the line again for each one (that made an 80,000-character line take seconds), and
// no two adjacent quantifiers can split the same run of characters between them.

const ATX_HEADING = /^ {0,3}(#{1,6})(?:\s+(.*))?$/;
const SETEXT_UNDERLINE = /^ {0,3}(=+|-+)\s*$/;
const THEMATIC_BREAK = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
/** A code fence's opening line; a backtick fence's info string holds no backtick (```npm i``` is a code span). */
const FENCE = /^ {0,3}(?:(`{3,})(?=[^`]*$)|(~{3,}))/;
/** A list item; an ordered one's number is kept ("2. Mix the flour": step 2 is the reader's), a bullet is not. */
const LIST_ITEM = /^\s*(?:[-*+]|(\d{1,9}[.)]))\s+(.*)$/;
const TABLE_SEPARATOR = /^\s*(?:\|\s*)?:?-+:?\s*(?:\|\s*:?-+:?\s*)*(?:\|\s*)?$/;
/**
 * A link reference definition (`[label]: https://… "title"`, the title's quotes escaped in it), which is not
 * text. Only that (a title going on to the next line is not read as one): a line with more
 * after the address (`[Warning]: Never descend…`, a changelog's `[1.2.0]: fixed…`) is text, and so is a
 * footnote (`[^1]: …`), which GitHub shows at the end.
 */
const LINK_DEFINITION = /^ {0,3}\[(?!\^)[^\]]+\]:[ \t]*(?:<[^<>]*>|\S+)(?:[ \t]+(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\((?:[^()\\]|\\.)*\)))?[ \t]*$/;
const BLOCKQUOTE_MARKERS = /^(?: {0,3}>\s?)+/;
const COMMENT_START = /^ {0,3}<!--/;
/**
 * The opening tag of a script or style block, alone on its line (attributes and all, or cut after its name
 * when they go on below), which runs to the line that closes it. A line with more on it is read as text,
 * its tags dropped: in a tutorial, "<style> holds CSS rules." or "<script> and </script> wrap code" is prose.
 */
const SCRIPT_START = /^ {0,3}<(script|style)(?:\s[^>]*[^/>])?(?:>\s*)?$/i;
/**
 * A line of nothing but whole script or style elements (`<script>track("x")</script>`, `<style>.a{}</style>`):
 * not text either. Prose with such tags in it (`<script> and </script> wrap code.`) is still read as text.
 */
const SCRIPT_LINE = /^ {0,3}(?:<(script|style)\b[^<>]*>(?:[^<]|<(?!\/?(?:script|style)\b))*<\/\1\s*>\s*)+$/i;
/** Inline code, in which a closing tag is an example, not the end of a block. */
const INLINE_CODE = /`[^`]*`/g;
/** An HTML comment within a line; its text cannot hold another opener, so a failed match stops at the next one. */
const INLINE_COMMENT = /<!--(?:[^<-]|<(?!!--)|-(?!->))*-->/g;

export async function parseMarkdown(data: Uint8Array): Promise<ParsedDocument> {
  const lines = decodeText(data).replace(/\r\n?/g, "\n").split("\n");
  const collector = new SectionCollector();
  let kind: "prose" | "list" | "table" | null = null;
  let block: string[] = [];

  const flush = () => {
    if (block.length > 0) collector.addParagraph(kind === "prose" ? block.join(" ") : block.join("\n"));
    block = [];
    kind = null;
  };
  const add = (blockKind: "prose" | "list" | "table", text: string) => {
    if (kind !== blockKind) flush();
    kind = blockKind;
    if (text !== "") block.push(text);
  };

  const closes = (line: string, tag: string) => line.replace(INLINE_CODE, "").toLowerCase().includes(tag);
  /** For each line, the first line from it on that closes the tag outside inline code (-1: none), found for all lines at once. */
  const closingsFrom = new Map<string, Int32Array>();
  const nextClosing = (tag: string, from: number) => {
    let next = closingsFrom.get(tag);
    if (!next) {
      next = new Int32Array(lines.length + 1).fill(-1);
      for (let k = lines.length - 1; k >= 0; k--) next[k] = closes(lines[k]!, tag) ? k : next[k + 1]!;
      closingsFrom.set(tag, next);
    }
    return next[from]!;
  };
  /** For each line, the first code fence or heading after it (-1: none): no script or style element spans one. */
  const breaksAfter = new Int32Array(lines.length + 1).fill(-1);
  for (let k = lines.length - 2; k >= 0; k--) breaksAfter[k] = FENCE.test(lines[k + 1]!) || ATX_HEADING.test(lines[k + 1]!) ? k + 1 : breaksAfter[k + 1]!;

  for (let i = readFrontMatter(lines, collector); i < lines.length; i++) {
    const line = lines[i]!.replace(BLOCKQUOTE_MARKERS, "");

    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const marker = fence[1] ?? fence[2]!;
      // Closed by a line of that character alone, at least as long (no info string). A fence opened in a
      // block quote reads its lines without as many of the quote's markers as it opened under (a code line's
      // own ">" is code), and ends with the quote: at a line without them.
      const closing = new RegExp(`^\\s*${marker[0] === "`" ? "`" : "~"}{${marker.length},}\\s*$`);
      const depth = (lines[i]!.slice(0, lines[i]!.length - line.length).match(/>/g) ?? []).length;
      const code: string[] = [];
      for (i++; i < lines.length; i++) {
        const codeLine = withoutQuoteMarkers(lines[i]!, depth);
        if (codeLine === null) {
          i--;
          break;
        }
        if (closing.test(codeLine)) break;
        code.push(codeLine.trimEnd());
      }
      collector.addPreformatted(code.filter((codeLine) => codeLine.trim() !== "").join("\n"));
      continue;
    }
    // An HTML comment is not text. One that opens a line and ends on a later one is skipped up to that
    // line's end; one that ends on its own line leaves only what is outside it (stripInline).
    if (COMMENT_START.test(line) && !line.includes("-->")) {
      flush();
      while (i + 1 < lines.length && !lines[i]!.includes("-->")) i++;
      continue;
    }
    // A script or style element is skipped up to its closing tag, and what follows that tag on its line is
    // read as a line of its own. One not closed before the next code fence or heading is no element: a
    // tutorial's "<style> elements hold CSS." is prose, whatever example closes one further on.
    const script = SCRIPT_START.exec(line);
    const closeTag = script ? `</${script[1]!.toLowerCase()}>` : "";
    let closing = script ? nextClosing(closeTag, i) : -1;
    if (closing !== -1 && breaksAfter[i] !== -1 && breaksAfter[i]! < closing) closing = -1;
    if (closing !== -1 && !closes(lines[closing]!, closeTag)) closing = -1; // a line cut below
    if (closing !== -1) {
      flush();
      const after = lines[closing]!.slice(lines[closing]!.toLowerCase().indexOf(closeTag) + closeTag.length);
      lines[closing] = after;
      i = after.trim() === "" ? closing : closing - 1;
      continue;
    }
    if (line.trim() === "" || line.replace(INLINE_COMMENT, "").trim() === "" || LINK_DEFINITION.test(line) || SCRIPT_LINE.test(line)) {
      flush();
      continue;
    }
    const atx = ATX_HEADING.exec(line);
    if (atx) {
      flush();
      collector.setHeading(stripInline(withoutClosingHashes(atx[2] ?? "")));
      continue;
    }
    if (kind === "prose" && SETEXT_UNDERLINE.test(line)) {
      const heading = block.join(" "); // its lines were read as prose already
      block = [];
      flush();
      collector.setHeading(heading);
      continue;
    }
    if (THEMATIC_BREAK.test(line)) {
      flush();
      continue;
    }
    if (line.includes("|")) {
      if (TABLE_SEPARATOR.test(line)) continue;
      if (line.trimStart().startsWith("|") || kind === "table") {
        add("table", tableRow(line));
        continue;
      }
    }
    const item = LIST_ITEM.exec(line);
    if (item) add("list", (item[1] ? `${item[1]} ` : "") + stripInline(item[2]!));
    else if (kind === "list" && block.length > 0) block[block.length - 1] += " " + stripInline(line);
    else add("prose", stripInline(line));
  }
  flush();
  return { pageCount: null, sections: collector.finish() };
}

/**
 * The line without `depth` block-quote markers (each up to 3 spaces, ">", then a space or tab if there is
 * one), or null when it has fewer. A loop, not a pattern: /(?: {0,3}>[ \t]?){n}/ tried 2^n ways of giving
 * the spaces between markers to one or the other before failing (600 ms a line at n = 28).
 */
function withoutQuoteMarkers(line: string, depth: number): string | null {
  let at = 0;
  for (let marker = 0; marker < depth; marker++) {
    let spaces = 0;
    while (spaces < 3 && line[at + spaces] === " ") spaces++;
    if (line[at + spaces] !== ">") return null;
    at += spaces + 1;
    if (line[at] === " " || line[at] === "\t") at++;
  }
  return line.slice(at);
}

/** A top-level title in YAML (title: …) or TOML (title = "…") front matter, quotes taken off. */
const FRONT_MATTER_TITLE = /^title\s*[:=]\s*(["']?)(.*?)\1\s*$/;
/** A YAML block scalar's indicator (title: >- with the text on the indented lines after it). */
const BLOCK_SCALAR = /^[>|][+-]?\d*$/;

/**
 * Front matter (YAML between --- lines, TOML between +++ lines, as static site generators write them) is
 * not text; its title, like an HTML page's <title>, heads the text before the first heading. Returns the
 * line after it (0 when there is none).
 */
function readFrontMatter(lines: string[], collector: SectionCollector): number {
  const fence = lines[0]?.trim();
  if (fence !== "---" && fence !== "+++") return 0;
  const closing = fence === "---" ? /^(---|\.\.\.)\s*$/ : /^\+\+\+\s*$/;
  const end = lines.findIndex((line, index) => index > 0 && closing.test(line));
  if (end === -1) return 0;
  for (let i = 1; i < end; i++) {
    const title = FRONT_MATTER_TITLE.exec(lines[i]!.trimEnd());
    if (!title) continue;
    let text = title[2]!;
    if (BLOCK_SCALAR.test(text)) {
      const folded: string[] = [];
      while (i + 1 < end && /^\s+\S/.test(lines[i + 1]!)) folded.push(lines[++i]!.trim());
      text = folded.join(" ");
    }
    collector.setHeading(stripInline(text));
    break;
  }
  return end + 1;
}

/** "Title ##" → "Title": an ATX heading's optional closing run of #, which must follow whitespace. */
function withoutClosingHashes(text: string): string {
  const trimmed = text.trimEnd();
  let end = trimmed.length;
  while (end > 0 && trimmed[end - 1] === "#") end--;
  if (end === trimmed.length) return trimmed;
  return end === 0 || /\s/.test(trimmed[end - 1]!) ? trimmed.slice(0, end).trimEnd() : trimmed;
}

function tableRow(line: string): string {
  // Set aside first, so that an escaped pipe (a \| b, also inside a code span) stays inside its cell.
  return protectLiterals(line, true)
    .trim()
    .replace(/^\||\|$/g, "")
    .split("|")
    .map(readProtected)
    .filter((cell) => cell !== "")
    .join(" | ");
}

function stripInline(text: string): string {
  return readProtected(protectLiterals(text));
}

/*
 * Characters that stand for themselves are set aside before the inline syntax is stripped and put back after,
 * as CommonMark reads them: a backslash-escaped ASCII punctuation character (snake\_case, \*stars\*), the
 * punctuation of a code span's text (`a*b*`, `&amp;`: no emphasis, no entity) and of an autolink's address.
 * Each becomes the private-use character U+E000 plus its code (U+E021-U+E07E). The text's own characters of
 * U+E000-U+E0FF (icon fonts) are written as U+E000 and U+E100 plus their offset meanwhile, so that none is
 * taken for one set aside.
 */
const SET_ASIDE_BASE = 0xe000;
const OWN_MARK = "\ue000";
const OWN_BASE = 0xe100;
/**
 * An autolink's address, as CommonMark has them: an absolute URI (any scheme: https:, mailto:, ftp:) or an
 * email address. Without this, <a@b.c> and <mailto:…> were stripped as HTML tags, address and all.
 */
const AUTOLINK = String.raw`(?:[A-Za-z][A-Za-z0-9+.-]{1,31}:[^<>\s]*|[A-Za-z0-9.!#$%&'*+/=?^_\`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*)`;
const OUTSIDE_CODE = new RegExp(String.raw`(<${AUTOLINK}>)|\\([!-/:-@[-\`{-~])|[\ue000-\ue0ff]`, "g");
/** What a code span's text or an autolink's address has set aside: all of it that inline syntax could read. */
const LITERAL_PUNCTUATION = /[!-/:-@[-`{-~\ue000-\ue0ff]/g;
/**
 * What readProtected puts back, and the entity references it decodes: CommonMark's (at most 7 decimal or 6 hex
 * digits), as HTML reads them (&#128; is the "€" of Windows-1252 there, not a control character).
 */
const TO_PUT_BACK = /\ue000([\ue100-\ue1ff])|([\ue021-\ue07e])|&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});/g;
/** The line with its literal characters set aside and its code spans' backticks dropped; `table`: a table row's. */
function protectLiterals(text: string, table = false): string {
  let out = "";
  let from = 0;
  for (const [start, end, ticks] of codeSpans(text)) {
    out += protectOutsideCode(text.slice(from, start), table);
    out += asWritten(text.slice(start + ticks, end - ticks), table);
    from = end;
  }
  return out + protectOutsideCode(text.slice(from), table);
}

function protectOutsideCode(text: string, table: boolean): string {
  return text.replace(OUTSIDE_CODE, (match, autolink: string | undefined, escaped: string | undefined) =>
    autolink !== undefined ? asWritten(autolink.slice(1, -1), table) : setAside(escaped ?? match),
  );
}

/**
 * A code span's text or an autolink's address, kept as written: its punctuation set aside. In a table row
 * "\|" is a pipe of the cell there too (as GitHub's tables read it).
 */
function asWritten(text: string, table: boolean): string {
  return (table ? text.replaceAll("\\|", "|") : text).replace(LITERAL_PUNCTUATION, setAside);
}

/** An inline HTML tag (readProtected drops it). */
const INLINE_TAG = String.raw`<\/?[a-zA-Z][^<>]*>`;
const INLINE_TAGS = new RegExp(INLINE_TAG, "g");
/** An inline HTML tag or an autolink: what starts before a backtick in it is read first (CommonMark). */
const TAG_OR_AUTOLINK = new RegExp(String.raw`<${AUTOLINK}>|${INLINE_TAG}`, "g");

/**
 * The code spans of a line, [start, end, backticks] each, delimiters included: a run of backticks (its first
 * one not escaped, nor inside a tag or autolink begun before it) opens one, which the next run of the same
 * length closes; a run never closed is literal text. Each closing run is found by a binary search among the
 * runs of its length, so a line of many runs takes n log n, not n².
 */
function codeSpans(text: string): [number, number, number][] {
  const runs: [at: number, length: number][] = [];
  for (let i = text.indexOf("`"); i !== -1; i = text.indexOf("`", i)) {
    let j = i;
    while (text[j] === "`") j++;
    runs.push([i, j - i]);
    i = j;
  }
  const byLength = new Map<number, number[]>();
  runs.forEach(([, length], k) => {
    const same = byLength.get(length);
    if (same) same.push(k);
    else byLength.set(length, [k]);
  });
  const tags = [...text.matchAll(TAG_OR_AUTOLINK)].map((tag) => [tag.index, tag.index + tag[0].length] as const);
  let tag = 0;
  let from = 0;
  const spans: [number, number, number][] = [];
  for (let k = 0; k < runs.length; k++) {
    let [at, length] = runs[k]!;
    // A tag that begins after the last span and before this run, and holds it: the run is the tag's text.
    while (tag < tags.length && (tags[tag]![1] <= at || tags[tag]![0] < from)) tag++;
    if (tag < tags.length && tags[tag]![0] < at) continue;
    if (escapedAt(text, at)) [at, length] = [at + 1, length - 1];
    const closing = length > 0 ? firstAbove(byLength.get(length), k) : undefined;
    if (closing === undefined) continue;
    spans.push([at, runs[closing]![0] + length, length]);
    from = runs[closing]![0] + length;
    k = closing;
  }
  return spans;
}

/** Whether the character at `at` is escaped: an odd number of backslashes stands before it. */
function escapedAt(text: string, at: number): boolean {
  let backslashes = 0;
  while (at - backslashes > 0 && text[at - backslashes - 1] === "\\") backslashes++;
  return backslashes % 2 === 1;
}

/** The first of the ascending `indexes` above `k`. */
function firstAbove(indexes: number[] | undefined, k: number): number | undefined {
  if (!indexes) return undefined;
  let low = 0;
  let high = indexes.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (indexes[middle]! <= k) low = middle + 1;
    else high = middle;
  }
  return indexes[low];
}

function setAside(char: string): string {
  const code = char.charCodeAt(0);
  return code >= SET_ASIDE_BASE ? OWN_MARK + String.fromCharCode(OWN_BASE + code - SET_ASIDE_BASE) : String.fromCharCode(SET_ASIDE_BASE + code);
}

/** Text set aside by protectLiterals, its inline syntax stripped, the set-aside characters put back and entities decoded. */
function readProtected(text: string): string {
  const stripped = text
    .replace(/!\[([^[\]]*)\]\([^()]*\)/g, "$1") // images → alt text
    .replace(/\[([^[\]]*)\]\([^()]*\)/g, "$1") // links → link text
    .replace(/\[([^[\]]+)\]\[[^[\]]*\]/g, "$1") // reference links
    .replace(INLINE_COMMENT, " ")
    .replace(INLINE_TAGS, " ")
    .replace(/\*\*(?=\S)((?:[^*]|\*(?!\*))+?)(?<=\S)\*\*/g, "$1") // strong
    .replace(/__(?=\S)((?:[^_]|_(?!_))+?)(?<=\S)__/g, "$1")
    .replace(/~~(?=\S)((?:[^~]|~(?!~))+?)(?<=\S)~~/g, "$1") // strikethrough
    .replace(/(^|[^\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])/g, "$1$2") // emphasis
    .replace(/(^|[^\w_])_(?=\S)([^_]+?)(?<=\S)_(?![\w_])/g, "$1$2");
  return cleanLine(
    stripped.replace(TO_PUT_BACK, (match, own: string | undefined, setAsideChar: string | undefined) =>
      own !== undefined
        ? String.fromCharCode(own.charCodeAt(0) - OWN_BASE + SET_ASIDE_BASE)
        : setAsideChar !== undefined
          ? String.fromCharCode(setAsideChar.charCodeAt(0) - SET_ASIDE_BASE)
          : decodeHTMLStrict(match),
    ),
  );
}

