// Text set in a font without a Unicode map, on a page whose other text reads fine. pdfjs then gives the
// glyphs' codes as characters: in figures drawn by plotting tools these are letters shifted by a constant
// ("WKH" for "the") with control characters for the spaces. Left in, they were indexed as words no query
// can match (react_paper.pdf, Figure 1: "FRXQWHUWRS" for "countertop"). The runs of such fonts are taken
// out of the page's lines, and the area they cover is read by OCR instead.
import type { PdfTextRun } from "./pdf-layout.ts";

/** What pdfjs makes of glyphs it has no Unicode for: control characters, private-use ones or U+FFFD. */
const UNMAPPED = /(?![\t\n\v\f\r])[\p{Cc}\p{Co}\uFFFD]/gu;
/**
 * A font is unmapped when this share of its characters are. Its spaces alone come out as control
 * characters (a quarter to a third of a garbled run's characters); a mapped font gives none.
 */
const UNMAPPED_FONT_MIN_SHARE = 0.05;

export interface FontRun extends PdfTextRun {
  fontName: string;
  height: number;
}

/** The fonts of the page whose runs are unmapped. */
export function unmappedFonts(runs: readonly FontRun[]): Set<string> {
  const counts = new Map<string, { chars: number; unmapped: number }>();
  for (const run of runs) {
    const count = counts.get(run.fontName) ?? { chars: 0, unmapped: 0 };
    count.chars += visible(run).length;
    count.unmapped += run.str.match(UNMAPPED)?.length ?? 0;
    counts.set(run.fontName, count);
  }
  return new Set([...counts].filter(([, count]) => count.unmapped > 0 && count.unmapped >= count.chars * UNMAPPED_FONT_MIN_SHARE).map(([font]) => font));
}

/** Unmapped runs that can hold text: 16 characters or more, not a symbol font's few bullets repeated. */
const AREA_MIN_CHARS = 16;
const AREA_MIN_DISTINCT_CHARS = 4;

/** Whether the area of these unmapped runs is worth an OCR reading. */
export function worthReading(runs: readonly FontRun[]): boolean {
  const chars = runs.flatMap((run) => [...visible(run)]);
  return chars.length >= AREA_MIN_CHARS && new Set(chars).size >= AREA_MIN_DISTINCT_CHARS;
}

/** Visible characters of the runs, unmapped ones included. */
export function visibleCharacters(runs: readonly FontRun[]): number {
  return runs.reduce((sum, run) => sum + visible(run).length, 0);
}

/** The run's text without white space. */
function visible(run: FontRun): string {
  return run.str.replace(/\s/g, "");
}

/** The rectangle [x0, y0, x1, y1] (PDF coordinates) the runs cover, with a margin of half a line around it. */
export function areaOf(runs: readonly FontRun[]): [number, number, number, number] {
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  let margin = 0;
  for (const run of runs) {
    const [x, y] = [run.transform[4] ?? 0, run.transform[5] ?? 0];
    // From the baseline: a descender below, the run's height above.
    [x0, y0, x1, y1] = [Math.min(x0, x), Math.min(y0, y - run.height * 0.3), Math.max(x1, x + run.width), Math.max(y1, y + run.height)];
    margin = Math.max(margin, run.height / 2);
  }
  return [x0 - margin, y0 - margin, x1 + margin, y1 + margin];
}
