// Text clean-up shared by the parsers, so every format hands the chunker the same shape of
// text: paragraphs separated by blank lines, meaningful line breaks kept as single newlines.

import { INVISIBLE_NOT_JOINERS } from "../../characters.ts";

// Control characters other than tab/newline/CR; PDFs with broken font encodings are full of them.
const CONTROL = /[\u0000-\u0008\u000e-\u001f\u007f]/g;

// Typographic ligatures (ﬁ, ﬂ, …) that PDF text layers and converted documents contain; as
// single characters they would never match a search for the letters.
const LIGATURES = /[\ufb00-\ufb06]/g;

/** One line of text: ligatures spelled out, every run of whitespace a single space. */
export function cleanLine(text: string): string {
  return text
    .replace(INVISIBLE_NOT_JOINERS, "")
    .replace(CONTROL, " ")
    .replace(LIGATURES, (ligature) => ligature.normalize("NFKC"))
    .replace(/\s+/g, " ")
    .trim();
}

/** Paragraphs separated by blank lines; the lines inside a paragraph are joined with spaces. */
export function unwrapParagraphs(text: string): string[] {
  return text
    .split(/\n\s*\n/)
    .map(cleanLine)
    .filter((paragraph) => paragraph !== "");
}
