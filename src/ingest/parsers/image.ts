import { recognizeText } from "./ocr.ts";
import { decodeImage, imageToOcrPng } from "./ocr-raster.ts";
import type { ParsedDocument } from "./types.ts";

/** A single-frame image (PNG, JPEG, WebP): one page of OCR text. */
export async function parseImage(data: Uint8Array, typeName: string): Promise<ParsedDocument> {
  const image = await decodeImage(data, `Not a valid ${typeName} image`);
  const text = await recognizeText(await imageToOcrPng(image));
  return { pageCount: 1, sections: text === "" ? [] : [{ text, page: 1, heading: "" }] };
}
