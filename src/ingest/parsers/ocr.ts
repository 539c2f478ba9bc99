import { createWorker, OEM, type Block, type Worker } from "tesseract.js";
import { cleanLine } from "./text-cleanup.ts";
import { imageSize } from "image-size";
import { turnPng } from "./ocr-raster.ts";
import { ParseError } from "./types.ts";

// One Tesseract worker thread per process, created on first use. It holds ~100 MB and keeps the
// process alive, so long-running callers keep it and short-lived ones call terminateOcr().

/** Lines read with less confidence (0–100) are dropped: on photos they are noise, not text. */
const MIN_LINE_CONFIDENCE = 50;
/**
 * A page on its side or upside down reads as garbage ("Z3c4", "258;", "umep diys"): few words of two
 * letters or more are read with confidence ≥ LEGIBLE_CONFIDENCE. When a reading has fewer than
 * MIN_LEGIBLE_LETTERS letters in such words but found MIN_WORDS_TO_TURN words at all (a photo may have
 * none), the page is read again turned 90°, 180° and 270°, and the most legible reading is kept. Measured:
 * a two-line caption reads 43 legible letters upright and 8-10 turned; the sample page with a photo
 * (../shared/fixtures/docs/images/image_metadata.png) 101 upright, so it is read once.
 */
const LEGIBLE_CONFIDENCE = 80;
const MIN_LEGIBLE_LETTERS = 20;
const MIN_WORDS_TO_TURN = 4;
/** Pages of one document illegible in every orientation, after which its other pages are not turned (4 readings each). */
const MAX_FRUITLESS_TURNS = 2;
/**
 * Larger images are not turned: each turn decodes the image and draws it again (4 bytes a pixel, twice),
 * inside the parser process's memory limit; three turns of a 16 MP page raised RSS by 70 MB. A page
 * scanned at 200 dpi is ~4 MP.
 */
const MAX_TURN_PIXELS = 16_000_000;
const ORIENTATIONS = [0, 90, 180, 270] as const;
type Degrees = (typeof ORIENTATIONS)[number];

/**
 * What the pages of one document (PDF, TIFF) have shown so far: the next page is read first in the
 * orientation that worked, and a document whose pages are illegible however turned (a poor scan, a
 * photo) stops being turned, rather than taking four readings a page.
 */
export class PageOrientation {
  degrees: Degrees = 0;
  fruitlessTurns = 0;
}

/** A page that takes longer than this is abandoned (and the worker replaced), never waited on forever. */
const RECOGNIZE_TIMEOUT_MS = 120_000;
const WORKER_ENTRY = new URL("./ocr-worker.ts", import.meta.url);

let worker: Promise<Worker> | null = null;
let queue: Promise<unknown> = Promise.resolve();

function sharedWorker(): Promise<Worker> {
  worker ??= createWorker("eng", OEM.LSTM_ONLY, {
    workerPath: WORKER_ENTRY as unknown as string,
    cacheMethod: "readOnly",
    // Without a handler tesseract.js rethrows job failures from its message listener.
    errorHandler: () => {},
  }).catch((error) => {
    worker = null;
    throw error;
  });
  return worker;
}

/** Text of an image (PNG/JPEG/TIFF bytes), as paragraphs separated by blank lines. */
export function recognizeText(image: Uint8Array, orientation = new PageOrientation()): Promise<string> {
  // Jobs run one at a time, so the timeout measures recognition rather than time spent queued.
  const job = queue.then(() => recognizeNow(image, orientation));
  queue = job.catch(() => {});
  return job;
}

async function recognizeNow(image: Uint8Array, orientation: PageOrientation): Promise<string> {
  const turned = (degrees: Degrees) => (degrees === 0 ? image : turnPng(image, degrees));
  let best = await read(await turned(orientation.degrees));
  if (legible(best) || orientation.fruitlessTurns >= MAX_FRUITLESS_TURNS || pixels(image) > MAX_TURN_PIXELS) return best.text;
  let bestDegrees = orientation.degrees;
  for (const degrees of ORIENTATIONS) {
    if (degrees === orientation.degrees) continue;
    const reading = await read(await turned(degrees));
    if (reading.legibleLetters > best.legibleLetters) [best, bestDegrees] = [reading, degrees];
  }
  if (legible(best)) orientation.degrees = bestDegrees;
  else orientation.fruitlessTurns++;
  return best.text;
}

function pixels(image: Uint8Array): number {
  const { width = 0, height = 0 } = imageSize(image);
  return width * height;
}

/** Legible, or too little found to be worth turning. */
function legible(reading: Reading): boolean {
  return reading.legibleLetters >= MIN_LEGIBLE_LETTERS || reading.words < MIN_WORDS_TO_TURN;
}

interface Reading {
  text: string;
  words: number;
  /** Letters in words of two letters or more read with confidence ≥ LEGIBLE_CONFIDENCE. */
  legibleLetters: number;
}

async function read(image: Uint8Array): Promise<Reading> {
  const tesseract = await sharedWorker();
  let timer: Timer | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ParseError("Text recognition took too long")), RECOGNIZE_TIMEOUT_MS);
  });
  try {
    const { data } = await Promise.race([tesseract.recognize(Buffer.from(image), {}, { text: false, blocks: true }), timeout]);
    const blocks = data.blocks ?? [];
    const words = blocks.flatMap((block) => block.paragraphs.flatMap((paragraph) => paragraph.lines.flatMap((line) => line.words)));
    let legibleLetters = 0;
    for (const word of words) {
      const letters = word.text.match(/\p{L}/gu)?.length ?? 0;
      if (word.confidence >= LEGIBLE_CONFIDENCE && letters >= 2) legibleLetters += letters;
    }
    return { text: confidentParagraphs(blocks).join("\n\n"), words: words.length, legibleLetters };
  } catch (error) {
    if (error instanceof ParseError) await terminateOcr();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

function confidentParagraphs(blocks: Block[]): string[] {
  const paragraphs: string[] = [];
  for (const paragraph of blocks.flatMap((block) => block.paragraphs)) {
    const lines = paragraph.lines
      .filter((line) => line.confidence >= MIN_LINE_CONFIDENCE && /[\p{L}\p{N}]/u.test(line.text))
      .map((line) => cleanLine(line.text));
    const text = lines.join(" ").trim();
    if (text !== "") paragraphs.push(text);
  }
  return paragraphs;
}

/** Stops the worker thread; the next recognizeText() starts a new one. */
export async function terminateOcr(): Promise<void> {
  const current = worker;
  worker = null;
  if (current) await (await current.catch(() => null))?.terminate();
}
