import JSZip from "jszip";
import { DomUtils, parseDocument } from "htmlparser2";
import type { Document, Element } from "domhandler";
import { posix } from "node:path";
import { PACKAGE_LIMITS } from "./package-limits.ts";
import { ParseError } from "./types.ts";

// Reading Office Open XML packages (docx, pptx, xlsx are zip files of XML parts).

const MB = 1024 * 1024;
const ZIP_BOMB = "it looks like a zip bomb";

/** The ZipObject method that streams a part's decompressed bytes (documented, missing from jszip's types). */
type StreamingZipObject = JSZip.JSZipObject & { internalStream(type: "uint8array"): JSZip.JSZipStreamHelper<Uint8Array> };

function isZip(data: Uint8Array): boolean {
  return data[0] === 0x50 && data[1] === 0x4b && data[2] === 0x03 && data[3] === 0x04;
}

/**
 * Opens the package after checking that it stays within the decompression limits; any other
 * failure becomes a ParseError with `invalidMessage`. Callers that hand the bytes to another
 * reader (mammoth, SheetJS) must open the package with this first.
 */
export async function openPackage(data: Uint8Array, invalidMessage: string): Promise<JSZip> {
  if (!isZip(data)) throw new ParseError(invalidMessage);
  // Counted before jszip builds an object per central directory record.
  if (countCentralDirectoryRecords(data) > PACKAGE_LIMITS.parts) {
    throw new ParseError(`The file has more than ${PACKAGE_LIMITS.parts} parts; ${ZIP_BOMB}`);
  }
  try {
    const zip = await JSZip.loadAsync(data);
    await assertDecompressedSize(zip);
    return zip;
  } catch (error) {
    if (error instanceof ParseError) throw error;
    throw new ParseError(invalidMessage);
  }
}

/**
 * An upper bound of the number of entries: occurrences of the central directory record
 * signature. (Compressed data may contain the 4 bytes by chance, about once per 4 GB.)
 */
function countCentralDirectoryRecords(data: Uint8Array): number {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const signature = Buffer.from([0x50, 0x4b, 0x01, 0x02]);
  let count = 0;
  for (let at = bytes.indexOf(signature); at !== -1 && count <= PACKAGE_LIMITS.parts; at = bytes.indexOf(signature, at + 4)) count++;
  return count;
}

/**
 * Inflates every part with a running count, stopping as soon as a part or the whole package passes
 * its limit. The sizes the zip headers declare are not trusted: they are the attacker's to write.
 */
async function assertDecompressedSize(zip: JSZip): Promise<void> {
  let total = 0;
  for (const file of Object.values(zip.files)) {
    if (file.dir) continue;
    let part = 0;
    await new Promise<void>((resolve, reject) => {
      const stream = (file as StreamingZipObject).internalStream("uint8array");
      stream
        .on("data", (chunk) => {
          part += chunk.length;
          total += chunk.length;
          if (part <= PACKAGE_LIMITS.partBytes && total <= PACKAGE_LIMITS.fileBytes) return;
          stream.pause();
          reject(new ParseError(part > PACKAGE_LIMITS.partBytes
            ? `A part of the file (${file.name}) decompresses to more than ${PACKAGE_LIMITS.partBytes / MB} MB; ${ZIP_BOMB}`
            : `The file decompresses to more than ${PACKAGE_LIMITS.fileBytes / MB} MB; ${ZIP_BOMB}`));
        })
        .on("error", reject)
        .on("end", resolve)
        .resume();
    });
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
