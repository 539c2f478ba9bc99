import type { ParsedSection } from "./types.ts";

/**
 * Accumulates paragraphs into sections for parsers that read a document top to bottom.
 * A heading or a page change starts a new section; the heading stays in force across pages.
 * A heading with no text of its own is kept as a section with empty text so it is not lost.
 */
export class SectionCollector {
  private readonly sections: ParsedSection[] = [];
  private paragraphs: string[] = [];
  private heading = "";
  private headingIsBare = false;
  private page: number | null = null;
  /** Whether the page's first paragraph goes on with the page before's last (setPage). */
  private continues = false;

  constructor(private readonly meta?: Record<string, unknown>) {}

  /** A new page; `continuesParagraph`: its first paragraph goes on with the last one before it. */
  setPage(page: number, continuesParagraph = false): void {
    this.flush();
    this.pushBareHeading();
    this.page = page;
    this.continues = continuesParagraph;
  }

  setHeading(heading: string): void {
    // A page <title> is usually repeated by the first <h1>: keep one.
    if (heading === "" || (heading === this.heading && this.headingIsBare)) return;
    this.flush();
    this.pushBareHeading();
    this.heading = heading;
    this.headingIsBare = true;
    this.continues = false;
  }

  /** Adds a paragraph; single newlines inside it are kept as line breaks. */
  addParagraph(text: string): void {
    this.addTrimmed(text.trim());
  }

  /** Adds code or other preformatted text: its lines keep their indentation, the first one's too. */
  addPreformatted(text: string): void {
    this.addTrimmed(text.replace(/^(?:[ \t]*\n)+/, "").trimEnd());
  }

  private addTrimmed(text: string): void {
    if (text.trim() === "") return;
    this.paragraphs.push(text);
    this.headingIsBare = false;
  }

  finish(): ParsedSection[] {
    this.flush();
    this.pushBareHeading();
    return this.sections;
  }

  private flush(): void {
    if (this.paragraphs.length === 0) return;
    this.push(this.paragraphs.join("\n\n"));
    this.paragraphs = [];
  }

  private pushBareHeading(): void {
    if (this.headingIsBare) this.push("");
    this.headingIsBare = false;
  }

  private push(text: string): void {
    const section: ParsedSection = { text, page: this.page, heading: this.heading };
    if (this.meta) section.meta = this.meta;
    if (this.continues && text !== "") section.continuesParagraph = true;
    this.continues = false;
    this.sections.push(section);
  }
}
