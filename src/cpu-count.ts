// Logical CPU count. Not os.availableParallelism() or navigator.hardwareConcurrency: under Bun both read
// `navigator`, which pdfjs-dist's legacy build replaces, after which they return undefined.
import { cpus } from "node:os";

export function cpuCount(): number {
  return Math.max(1, cpus().length);
}
