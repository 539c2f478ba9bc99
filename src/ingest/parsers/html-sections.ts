import { Parser } from "htmlparser2";
import { SectionCollector } from "./section-collector.ts";
import { cleanLine } from "./text-cleanup.ts";
import type { ParsedSection } from "./types.ts";

// Page furniture and non-text elements whose content is never document text.
const SKIPPED = new Set([
  "script", "style", "nav", "footer", "aside", "noscript", "template",
  "svg", "canvas", "iframe", "object", "button", "select",
]);
/**
 * A <header> is the site's banner only outside these (as ARIA maps it): inside an article or section it
 * holds that part's own title and byline (a blog post's <article><header><h1>), which is text.
 */
const SECTIONING = new Set(["article", "section", "main"]);
// Form controls: their text is kept apart from their neighbours' ("Name" and a textarea's "Comments").
const SPACED = new Set(["label", "input", "textarea", "output"]);
const SKIPPED_ROLES = new Set(["navigation", "banner", "contentinfo"]);
/**
 * Words in a class or id that mark page furniture rather than the document: site footers and sidebars,
 * breadcrumbs, newsletter boxes (whole words only: "site-footer", not "footerless"), and cookie or consent
 * notices, social links and sharing buttons, named as such (a baking page's "cookie-recipe" and a course's
 * "social-studies" are text). Never on the page's body or main content (WRAPPERS, and a class or id that
 * also says content or main: "main-content has-sidebar").
 */
const FURNITURE_WORDS = new Set(["footer", "sidebar", "breadcrumb", "breadcrumbs", "newsletter", "gdpr"]);
const FURNITURE_NAMES = /(?:cookie|consent)s?[-_]?(?:banner|notice|bar|popup|modal|message|dialog)|social[-_]?(?:links|icons|media|buttons|share|follow)|share[-_]?(?:buttons?|links?|bar|tools)/;
const CONTENT_WORDS = new Set(["content", "main", "article", "body", "post", "entry"]);
const WRAPPERS = new Set(["html", "body", "main", "article"]);
const HIDDEN_STYLE = /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\s*(?:;|!|$)/i;

function isFurniture(name: string, attribs: Record<string, string>): boolean {
  if (WRAPPERS.has(name)) return false;
  const names = `${attribs.class ?? ""} ${attribs.id ?? ""}`.toLowerCase();
  const words = names.split(/[^a-z0-9]+/);
  if (words.some((word) => CONTENT_WORDS.has(word))) return false;
  return words.some((word) => FURNITURE_WORDS.has(word)) || FURNITURE_NAMES.test(names);
}
const HEADINGS = new Set(["h1", "h2", "h3", "h4", "h5", "h6"]);
const INDENT = /^[ \t]*/;
// Elements that end a paragraph.
const BLOCKS = new Set([
  "p", "div", "section", "article", "main", "blockquote", "pre", "ul", "ol", "dl", "table",
  "thead", "tbody", "tfoot", "figure", "figcaption", "hr", "address", "form", "fieldset",
  "details", "summary", "caption", "legend", "center", "body", "html",
]);
// Elements that end a line inside a paragraph.
const LINES = new Set(["br", "li", "tr", "dt", "dd", "option"]);
const CELLS = new Set(["td", "th"]);

/**
 * HTML → sections: <title> and h1–h6 become headings, block elements paragraph breaks,
 * list items and table rows lines (cells joined with " | "); boilerplate elements are dropped, and so are
 * hidden ones and page furniture marked by its class or id (isFurniture).
 * Inside a cell, paragraphs and line breaks are only spaces, so that a row stays one line: Word
 * (through mammoth) puts every cell's text in a <p>.
 */
export function htmlToSections(html: string): ParsedSection[] {
  const collector = new SectionCollector();
  let skipDepth = 0;
  let sectioningDepth = 0;
  let preDepth = 0;
  let cellDepth = 0;
  let capture: string | null = null; // text of the <title> or heading being read
  let line = "";
  // Whether `line` has any visible text yet, kept as text arrives: testing the whole line again at
  // every table cell made a row of many cells quadratic.
  let lineHasText = false;
  let lines: string[] = [];

  const addToLine = (text: string) => {
    line += text;
    lineHasText ||= cleanLine(text) !== "";
  };
  const endLine = () => {
    // A <pre> line keeps its indentation (code's meaning may hang on it); the rest of it is cleaned.
    if (lineHasText) lines.push(preDepth > 0 ? INDENT.exec(line)![0] + cleanLine(line) : cleanLine(line));
    line = "";
    lineHasText = false;
  };
  const endParagraph = () => {
    endLine();
    if (lines.length > 0 && preDepth > 0) collector.addPreformatted(lines.join("\n"));
    else if (lines.length > 0) collector.addParagraph(lines.join("\n"));
    lines = [];
  };

  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (skipDepth > 0 || SKIPPED.has(name) || (name === "header" && sectioningDepth === 0) || "hidden" in attribs || attribs["aria-hidden"] === "true" ||
          SKIPPED_ROLES.has(attribs.role ?? "") || HIDDEN_STYLE.test(attribs.style ?? "") || isFurniture(name, attribs)) {
          skipDepth++;
          return;
        }
        if (name === "title" || HEADINGS.has(name)) {
          endParagraph();
          capture = "";
        } else if (cellDepth > 0 && (BLOCKS.has(name) || LINES.has(name))) addToLine(" ");
        else if (BLOCKS.has(name)) endParagraph();
        else if (LINES.has(name)) endLine();
        if (CELLS.has(name)) {
          if (lineHasText) line += " | ";
          cellDepth++;
        }
        if (name === "pre") preDepth++;
        if (SECTIONING.has(name)) sectioningDepth++;
        if (SPACED.has(name)) addToLine(" ");
      },
      ontext(text) {
        if (skipDepth > 0) return;
        if (capture !== null) capture += text;
        else if (preDepth > 0) {
          const [first = "", ...rest] = text.split("\n");
          addToLine(first);
          for (const next of rest) {
            endLine();
            addToLine(next);
          }
        } else addToLine(text);
      },
      onclosetag(name) {
        if (skipDepth > 0) {
          skipDepth--;
          return;
        }
        if ((name === "title" || HEADINGS.has(name)) && capture !== null) {
          collector.setHeading(cleanLine(capture));
          capture = null;
        } else if (CELLS.has(name)) cellDepth = Math.max(0, cellDepth - 1);
        else if (cellDepth > 0 && (BLOCKS.has(name) || LINES.has(name))) addToLine(" ");
        else if (BLOCKS.has(name)) endParagraph();
        else if (LINES.has(name)) endLine();
        if (name === "pre") preDepth--;
        if (SECTIONING.has(name)) sectioningDepth--;
        if (SPACED.has(name)) addToLine(" ");
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  endParagraph();
  return collector.finish();
}
