import { createCanvas, loadImage, type Image, type ImageData } from "@napi-rs/canvas";
import { imageSize } from "image-size";
import { asParseError, ParseError } from "./types.ts";

// Turning decoded pixels into what OCR reads best: an opaque PNG. Transparent areas become white,
// so dark text on a transparent background does not vanish into black.

/** Larger images are refused rather than tying up OCR (and memory) for minutes. */
export const MAX_OCR_PIXELS = 50_000_000;

export function assertOcrSize(width: number, height: number, invalidMessage: string): void {
  if (!(width > 0 && height > 0)) throw new ParseError(invalidMessage);
  if (width * height > MAX_OCR_PIXELS) {
    throw new ParseError(`Image is too large to read (${width}×${height} pixels; the limit is ${MAX_OCR_PIXELS / 1_000_000} megapixels)`);
  }
}

/**
 * Decodes PNG, JPEG or WebP bytes; undecodable bytes give a ParseError. The size is read from the
 * header first, so a small file that would decode to gigabytes of pixels is refused unopened.
 */
export async function decodeImage(data: Uint8Array, invalidMessage: string): Promise<Image> {
  try {
    const { width = 0, height = 0 } = imageSize(data);
    assertOcrSize(width, height, invalidMessage);
    return await loadImage(Buffer.from(data));
  } catch (error) {
    throw asParseError(error, invalidMessage);
  }
}

export function imageToOcrPng(image: Image): Promise<Buffer> {
  const canvas = whiteCanvas(image.width, image.height);
  canvas.getContext("2d").drawImage(image, 0, 0);
  return canvas.encode("png");
}

export function pixelsToOcrPng(pixels: ImageData): Promise<Buffer> {
  const layer = createCanvas(pixels.width, pixels.height);
  layer.getContext("2d").putImageData(pixels, 0, 0);
  const canvas = whiteCanvas(pixels.width, pixels.height);
  canvas.getContext("2d").drawImage(layer, 0, 0);
  return canvas.encode("png");
}

/** The PNG turned clockwise by `degrees`: how a page scanned on its side or upside down is read again. */
export async function turnPng(png: Uint8Array, degrees: 90 | 180 | 270): Promise<Buffer> {
  const image = await loadImage(Buffer.from(png));
  const sideways = degrees !== 180;
  const canvas = createCanvas(sideways ? image.height : image.width, sideways ? image.width : image.height);
  const context = canvas.getContext("2d");
  context.translate(canvas.width / 2, canvas.height / 2);
  context.rotate((degrees * Math.PI) / 180);
  context.drawImage(image, -image.width / 2, -image.height / 2);
  return canvas.encode("png");
}

function whiteCanvas(width: number, height: number) {
  const canvas = createCanvas(width, height);
  const context = canvas.getContext("2d");
  context.fillStyle = "#ffffff";
  context.fillRect(0, 0, width, height);
  return canvas;
}
