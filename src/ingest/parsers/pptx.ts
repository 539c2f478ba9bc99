import type { Element } from "domhandler";
import { DomUtils } from "htmlparser2";
import type JSZip from "jszip";
import { elementsNamed, localNameOf, notValidMessage, openPackage, readRelationships, readXmlPart, relationshipIdOf } from "./ooxml-package.ts";
import { assertPageLimit } from "./page-limit.ts";
import { SectionCollector } from "./section-collector.ts";
import { cleanLine } from "./text-cleanup.ts";
import { asParseError, ParseError, type ParsedDocument, type ParsedSection } from "./types.ts";

const INVALID = notValidMessage("PPTX");
const PRESENTATION = "ppt/presentation.xml";

/** PowerPoint: one page per slide, title placeholder as heading, body text, then speaker notes. */
export async function parsePptx(data: Uint8Array): Promise<ParsedDocument> {
  const zip = await openPackage(data, "PPTX");
  try {
    return await readPresentation(zip);
  } catch (error) {
    throw asParseError(error, INVALID); // a damaged part inside an intact zip directory
  }
}

async function readPresentation(zip: JSZip): Promise<ParsedDocument> {
  const presentation = await readXmlPart(zip, PRESENTATION);
  if (!presentation) throw new ParseError(INVALID);
  const targets = new Map((await readRelationships(zip, PRESENTATION)).map((rel) => [rel.id, rel.target]));
  const slidePaths = elementsNamed(presentation, "sldId").map((slideId) => targets.get(relationshipIdOf(slideId) ?? ""));
  assertPageLimit(slidePaths.length);

  const sections: ParsedSection[] = [];
  for (const [index, slidePath] of slidePaths.entries()) {
    if (slidePath) sections.push(...(await readSlide(zip, slidePath, index + 1)));
  }
  return { pageCount: slidePaths.length, sections };
}

async function readSlide(zip: JSZip, slidePath: string, slideNumber: number): Promise<ParsedSection[]> {
  const slide = await readXmlPart(zip, slidePath);
  if (!slide) return [];
  const collector = new SectionCollector({ slide: slideNumber });
  collector.setPage(slideNumber);
  const shapes = DomUtils.findAll((element) => ["sp", "graphicFrame"].includes(localNameOf(element.name)) && !inFallback(element), slide.children);
  const titles = shapes.filter((shape) => ["title", "ctrTitle"].includes(placeholderType(shape) ?? ""));
  collector.setHeading(titles.map((shape) => shapeLines(shape).join(" ")).join(" "));
  for (const shape of shapes) if (!titles.includes(shape)) collector.addParagraph(shapeLines(shape).join("\n"));

  const notesRel = (await readRelationships(zip, slidePath)).find((rel) => rel.type.endsWith("/notesSlide"));
  const notes = notesRel ? await readXmlPart(zip, notesRel.target) : null;
  if (notes) {
    const noteShapes = elementsNamed(notes, "sp").filter((shape) => placeholderType(shape) === "body");
    const noteText = noteShapes.flatMap(shapeLines).join("\n");
    if (noteText !== "") collector.addParagraph(`Speaker notes: ${noteText}`);
  }
  return collector.finish();
}

/**
 * Inside an mc:Fallback whose mc:Choice holds shapes: the copy of them for programs that cannot read the
 * Choice, which is read instead (both were read: the text came twice). A Fallback is read when its Choice
 * holds no shape (a picture, an equation's own markup).
 */
function inFallback(element: Element): boolean {
  for (let parent = element.parent; parent; parent = parent.parent) {
    if (parent.type !== "tag" || localNameOf((parent as Element).name) !== "Fallback") continue;
    const choices = (parent.parent as Element | null)?.children.filter((child): child is Element => child.type === "tag" && localNameOf((child as Element).name) === "Choice") ?? [];
    return choices.some((choice) => DomUtils.findOne((node) => ["sp", "graphicFrame"].includes(localNameOf(node.name)), choice.children) !== null);
  }
  return false;
}

function placeholderType(shape: Element): string | undefined {
  const placeholder = elementsNamed(shape, "ph")[0];
  return placeholder ? (placeholder.attribs.type ?? "obj") : undefined;
}

/** Text lines of a shape: one per paragraph; a table gives one line per row with cells joined by " | ". */
function shapeLines(shape: Element): string[] {
  const rows = elementsNamed(shape, "tr");
  if (rows.length > 0) {
    return rows.map((row) => elementsNamed(row, "tc").map((cell) => paragraphLines(cell).join(" ")).filter(Boolean).join(" | "));
  }
  return paragraphLines(shape);
}

/** One line per paragraph, and one more at each line break in it (<a:br/>, Shift+Enter), which holds no text. */
function paragraphLines(element: Element): string[] {
  return elementsNamed(element, "p")
    .flatMap((paragraph) =>
      DomUtils.findAll((node) => ["t", "br"].includes(localNameOf(node.name)), paragraph.children)
        .map((node) => (localNameOf(node.name) === "br" ? "\n" : DomUtils.textContent(node)))
        .join("")
        .split("\n"),
    )
    .map(cleanLine)
    .filter((line) => line !== "");
}
