// Browser globals pdfjs's legacy build expects, set before it loads. @napi-rs/canvas provides
// real implementations, which rendering (for OCR of scanned pages) needs; pdfjs's own fallback
// loads them with a runtime require that does not work inside a compiled executable.
import { DOMMatrix, ImageData, Path2D } from "@napi-rs/canvas";
// @ts-expect-error pdfjs-dist ships no types for its worker module
import * as pdfjsWorker from "pdfjs-dist/legacy/build/pdf.worker.mjs";

Object.assign(globalThis, {
  DOMMatrix: globalThis.DOMMatrix ?? DOMMatrix,
  ImageData: globalThis.ImageData ?? ImageData,
  Path2D: globalThis.Path2D ?? Path2D,
  // pdfjs then runs its parser on this thread instead of importing the worker file at run time.
  pdfjsWorker,
});
