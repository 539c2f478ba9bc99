import { createWorker, OEM, type Block, type Worker } from "tesseract.js";
import { cleanLine } from "./text-cleanup.ts";
import { ParseError } from "./types.ts";

// One Tesseract worker thread per process, created on first use. It holds ~100 MB and keeps the
// process alive, so long-running callers keep it and short-lived ones call terminateOcr().

/** Lines read with less confidence (0–100) are dropped: on photos they are noise, not text. */
const MIN_LINE_CONFIDENCE = 50;
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
export function recognizeText(image: Uint8Array): Promise<string> {
  // Jobs run one at a time, so the timeout measures recognition rather than time spent queued.
  const job = queue.then(() => recognizeNow(image));
  queue = job.catch(() => {});
  return job;
}

async function recognizeNow(image: Uint8Array): Promise<string> {
  const tesseract = await sharedWorker();
  let timer: Timer | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ParseError("Text recognition took too long")), RECOGNIZE_TIMEOUT_MS);
  });
  try {
    const { data } = await Promise.race([tesseract.recognize(Buffer.from(image), {}, { text: false, blocks: true }), timeout]);
    return confidentParagraphs(data.blocks ?? []).join("\n\n");
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
