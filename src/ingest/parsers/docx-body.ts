// The body of a Word document as the reader sees it, for what mammoth reads wrongly: it skips the elements
// it does not know with all their text, and reads hidden text as any other.
import { DomUtils, parseDocument } from "htmlparser2";
import type { ChildNode, Element } from "domhandler";
import { localNameOf } from "./ooxml-package.ts";

/** Elements whose text mammoth drops and a reader sees: a simple field's result, bidirectional runs. */
const UNWRAPPED = new Set(["fldSimple", "dir", "bdo"]);
const REWRITTEN = /<\w+:(?:fldSimple|dir|bdo|ruby|vanish)\b/;

/**
 * document.xml with a simple field's result ("Figure 7", a mail merge's name), bidirectional runs (w:dir,
 * w:bdo) and ruby's base text (furigana left out) in plain runs, and hidden runs (w:vanish) removed; null when
 * it holds none of these, which is most documents (the package is then read as it is).
 */
export function readableBody(documentXml: string): string | null {
  if (!REWRITTEN.test(documentXml)) return null;
  // The declaration is kept as written: serialized, it lost its closing "?" and the page count read nothing after it.
  const declaration = XML_DECLARATION.exec(documentXml)?.[0] ?? "";
  const document = parseDocument(documentXml.slice(declaration.length), { xmlMode: true });
  rewrite(document.children);
  return declaration + DomUtils.getOuterHTML(document, { xmlMode: true });
}

const XML_DECLARATION = /^\uFEFF?\s*<\?xml[^>]*\?>/;

function rewrite(nodes: ChildNode[]): void {
  for (const node of [...nodes]) {
    if (node.type !== "tag") continue;
    const element = node as Element;
    const name = localNameOf(element.name);
    if (name === "r" && isHidden(element)) {
      DomUtils.removeElement(element);
      continue;
    }
    rewrite(element.children);
    if (UNWRAPPED.has(name)) replaceWith(element, element.children);
    else if (name === "ruby") replaceWith(element, childNamed(element, "rubyBase")?.children ?? []);
  }
}

/** A run whose properties hide it (<w:vanish/>, not w:val="0"/"false"/"off"). */
function isHidden(run: Element): boolean {
  const vanish = childNamed(childNamed(run, "rPr"), "vanish");
  if (!vanish) return false;
  const value = Object.entries(vanish.attribs).find(([key]) => localNameOf(key) === "val")?.[1];
  return !["0", "false", "off"].includes(value ?? "");
}

function childNamed(element: Element | undefined, localName: string): Element | undefined {
  return element?.children.find((child): child is Element => child.type === "tag" && localNameOf((child as Element).name) === localName);
}

function replaceWith(element: Element, children: ChildNode[]): void {
  for (const child of [...children]) DomUtils.prepend(element, child);
  DomUtils.removeElement(element);
}
