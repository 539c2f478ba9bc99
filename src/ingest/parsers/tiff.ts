import { ImageData } from "@napi-rs/canvas";
import * as UTIF from "utif2";
import { PageOrientation, recognizeText } from "./ocr.ts";
import { assertOcrSize, pixelsToOcrPng } from "./ocr-raster.ts";
import { assertPageLimit } from "./page-limit.ts";
import { asParseError, ParseError, type ParsedDocument, type ParsedSection } from "./types.ts";

const INVALID = "Not a valid TIFF image";

/** TIFF: one page per frame, each decoded with utif2 and read by OCR. */
export async function parseTiff(data: Uint8Array): Promise<ParsedDocument> {
  assertPageLimit(countFrames(data));
  // utif2 wraps what it is given in a Uint8Array: an ArrayBuffer is viewed, anything else copied.
  const buffer = data.slice().buffer;
  let frames: UTIF.IFD[];
  try {
    // NewSubfileType bit 0 marks reduced-resolution copies (thumbnails), not pages.
    frames = UTIF.decode(buffer).filter((ifd) => (tag(ifd, "t254", 0) & 1) === 0);
  } catch {
    throw new ParseError(INVALID);
  }
  if (frames.length === 0) throw new ParseError(INVALID);

  const sections: ParsedSection[] = [];
  const orientation = new PageOrientation();
  for (const [index, frame] of frames.entries()) {
    const text = await recognizeText(await framePng(buffer, frame), orientation);
    if (text !== "") sections.push({ text, page: index + 1, heading: "" });
  }
  return { pageCount: frames.length, sections };
}

async function framePng(buffer: ArrayBuffer, frame: UTIF.IFD): Promise<Buffer> {
  let rgba: Uint8Array;
  try {
    assertOcrSize(tag(frame, "t256", NaN), tag(frame, "t257", NaN), INVALID);
    describeJpegOutput(frame);
    UTIF.decodeImage(buffer, frame);
    rgba = isCmyk(frame) ? cmykToRgba(frame) : UTIF.toRGBA8(frame);
  } catch (error) {
    throw asParseError(error, INVALID);
  }
  if (rgba.length !== frame.width * frame.height * 4) throw new ParseError(INVALID);
  return pixelsToOcrPng(new ImageData(new Uint8ClampedArray(rgba.buffer, rgba.byteOffset, rgba.length), frame.width, frame.height));
}

/** TIFF tag values: compression 7 (JPEG); photometric interpretation 5 (separated inks); planar configuration 2 (a plane per sample); ink set 1 (CMYK). */
const JPEG_COMPRESSION = 7;
const SEPARATED = 5;
const PLANAR = 2;
const CMYK_INKS = 1;

/** The frame's first value of tag `name` (e.g. "t277"), or `fallback` when it has none. */
function tag(frame: UTIF.IFD, name: string, fallback: number): number {
  return Number((frame[name] as number[] | undefined)?.[0] ?? fallback);
}

/**
 * utif2 decodes JPEG-compressed strips and tiles to RGB whatever their components (it asks its decoder
 * for RGB), but lays out and converts the frame by its own samples: a greyscale page came out three times
 * too wide, wrapped and washed out, a CMYK one skewed, and OCR read nothing. Such a frame is described as
 * the RGB its decoder gives.
 */
function describeJpegOutput(frame: UTIF.IFD): void {
  if (tag(frame, "t259", 1) !== JPEG_COMPRESSION || tag(frame, "t258", 1) !== 8) return;
  const samples = tag(frame, "t277", 1);
  if (samples !== 1 && !(samples === 4 && tag(frame, "t262", 2) === SEPARATED)) return;
  frame.t277 = [3];
  frame.t258 = [8, 8, 8];
  frame.t262 = [2];
}

/**
 * An 8-bit CMYK frame with its samples interleaved (utif2 converts one through a global `window`, and
 * throws where there is none). Planar ones are left to utif2, which cannot lay them out either.
 */
function isCmyk(frame: UTIF.IFD): boolean {
  return (
    tag(frame, "t262", 2) === SEPARATED &&
    tag(frame, "t332", CMYK_INKS) === CMYK_INKS &&
    tag(frame, "t277", 1) >= 4 &&
    tag(frame, "t258", 1) === 8 &&
    tag(frame, "t284", 1) !== PLANAR
  );
}

/**
 * The frame's pixels as RGBA: each ink's share taken off white, and a fifth sample as alpha (utif2's own
 * conversion, without a colour profile).
 */
function cmykToRgba(frame: UTIF.IFD): Uint8Array {
  const data = frame.data as Uint8Array;
  const samples = tag(frame, "t277", 1);
  const rgba = new Uint8Array(frame.width * frame.height * 4);
  for (let pixel = 0, from = 0, to = 0; pixel < frame.width * frame.height; pixel++, from += samples, to += 4) {
    const white = (255 - data[from + 3]) / 255;
    rgba[to] = Math.round((255 - data[from]) * white);
    rgba[to + 1] = Math.round((255 - data[from + 1]) * white);
    rgba[to + 2] = Math.round((255 - data[from + 2]) * white);
    rgba[to + 3] = samples > 4 ? data[from + 4] : 255;
  }
  return rgba;
}

/**
 * Walks the chain of image directories without decoding them. utif2 follows the chain blindly,
 * so a damaged file whose chain loops back on itself would make it spin forever.
 */
function countFrames(data: Uint8Array): number {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const order = String.fromCharCode(data[0] ?? 0, data[1] ?? 0);
  if (data.length < 8 || (order !== "II" && order !== "MM")) throw new ParseError(INVALID);
  const little = order === "II";
  if (view.getUint16(2, little) !== 42) throw new ParseError(INVALID);
  const seen = new Set<number>();
  let offset = view.getUint32(4, little);
  while (offset !== 0) {
    if (seen.has(offset) || offset + 2 > data.length) throw new ParseError(INVALID);
    seen.add(offset);
    const entries = view.getUint16(offset, little);
    const next = offset + 2 + entries * 12;
    if (next + 4 > data.length) throw new ParseError(INVALID);
    offset = view.getUint32(next, little);
  }
  return seen.size;
}
