// Background work (ingestion, segment builds) yields the cores to requests: the threads doing it run at a
// lower scheduling priority, and so do the threads and processes they start (ONNX Runtime's threads, the
// parser processes), which inherit it. Searches and other requests then keep their latency while documents
// are ingested, and ingestion still gets every core nothing else wants.
import { setPriority } from "node:os";

/** The nice value of background threads: CFS gives a thread at 10 about a tenth of the share of one at 0. */
export const BACKGROUND_NICE = 10;

/**
 * Lowers the calling thread's priority. Linux only: there the nice value is a thread's (elsewhere it is the
 * whole process's, and would slow requests too).
 */
export function runInBackground(): void {
  if (process.platform !== "linux") return;
  try {
    setPriority(BACKGROUND_NICE);
  } catch {
    // Not permitted (a seccomp profile): the work runs at normal priority.
  }
}
