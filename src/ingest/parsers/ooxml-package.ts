import JSZip from "jszip";
import { DomUtils, parseDocument } from "htmlparser2";
import type { Document, Element } from "domhandler";
import { posix } from "node:path";
import { ParseError } from "./types.ts";
import { assertZipWithinLimits } from "./zip-bomb-check.ts";
import { topLevelStreams } from "./compound-file.ts";

// Reading Office Open XML packages (docx, pptx, xlsx are zip files of XML parts).

function isZip(data: Uint8Array): boolean {
  return data[0] === 0x50 && data[1] === 0x4b && data[2] === 0x03 && data[3] === 0x04;
}

export type OfficeFormat = "DOCX" | "PPTX" | "XLSX";

export function notValidMessage(format: OfficeFormat): string {
  return `Not a valid ${format} file`;
}

/** The stream a password-protected Office Open XML file keeps its encrypted zip in (MS-OFFCRYPTO). */
const ENCRYPTED_PACKAGE = "EncryptedPackage";
/** An Office 97-2003 file's main stream: the old extension, and the format to save it as. */
const LEGACY_STREAMS: [stream: string, extension: string, current: OfficeFormat][] = [
  ["WordDocument", ".doc", "DOCX"],
  ["Workbook", ".xls", "XLSX"],
  ["Book", ".xls", "XLSX"],
  ["PowerPoint Document", ".ppt", "PPTX"],
];

/**
 * Why bytes that are no zip cannot be read. Word, Excel and PowerPoint save a password-protected file, and
 * an Office 97-2003 one, as a Compound File Binary container, whose streams say which (both had been "not
 * valid").
 */
function notAPackage(data: Uint8Array, format: OfficeFormat): ParseError {
  const streams = topLevelStreams(data); // none in bytes that are no container
  if (streams.includes(ENCRYPTED_PACKAGE)) return new ParseError(`${format} file is password-protected: save it without a password and upload it again`);
  const legacy = LEGACY_STREAMS.find(([stream]) => streams.includes(stream));
  if (!legacy) return new ParseError(notValidMessage(format));
  const [, extension, current] = legacy;
  return new ParseError(`This is an Office 97-2003 file (${extension}), not ${format}: save it as .${current.toLowerCase()} and upload it again`);
}

/**
 * Opens the package after checking that it stays within the decompression limits (a zip bomb
 * fails with a ParseError saying so); any other failure becomes a ParseError saying the file is
 * not valid. Callers that hand the bytes to another reader (mammoth, SheetJS) must open the
 * package with this first.
 */
export async function openPackage(data: Uint8Array, format: OfficeFormat): Promise<JSZip> {
  if (!isZip(data)) throw notAPackage(data, format);
  try {
    assertZipWithinLimits(data);
    return await JSZip.loadAsync(data);
  } catch (error) {
    if (error instanceof ParseError) throw error;
    throw new ParseError(notValidMessage(format));
  }
}

/** The parsed XML of a part, or null when the package has no such part. */
export async function readXmlPart(zip: JSZip, path: string): Promise<Document | null> {
  const file = zip.file(path);
  if (!file) return null;
  return parseDocument(await file.async("string"), { xmlMode: true });
}

export interface Relationship {
  id: string;
  /** Relationship type URI, e.g. ".../relationships/notesSlide". */
  type: string;
  /** Path of the target part inside the package. */
  target: string;
}

/** The internal relationships of a part, from its _rels file. */
export async function readRelationships(zip: JSZip, partPath: string): Promise<Relationship[]> {
  const folder = posix.dirname(partPath);
  const rels = await readXmlPart(zip, posix.join(folder, "_rels", `${posix.basename(partPath)}.rels`));
  const relationships: Relationship[] = [];
  for (const rel of rels ? elementsNamed(rels, "Relationship") : []) {
    const { Id: id, Type: type = "", Target: target, TargetMode: mode } = rel.attribs;
    if (!id || !target || mode === "External") continue;
    relationships.push({ id, type, target: target.startsWith("/") ? target.slice(1) : posix.normalize(posix.join(folder, target)) });
  }
  return relationships;
}

/** Elements with this local name (namespace prefix ignored), in document order. */
export function elementsNamed(root: Document | Element, localName: string): Element[] {
  return DomUtils.findAll((element) => localNameOf(element.name) === localName, root.children);
}

export function localNameOf(qualifiedName: string): string {
  return qualifiedName.slice(qualifiedName.indexOf(":") + 1);
}

/** The relationship id an element points with (`r:id`, whatever the namespace prefix). */
export function relationshipIdOf(element: Element): string | undefined {
  for (const [name, value] of Object.entries(element.attribs)) if (name.endsWith(":id")) return value;
  return undefined;
}
