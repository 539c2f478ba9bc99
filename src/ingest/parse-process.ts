// The ingestion worker's side of its parser child process (parse-child.ts). The child is started ahead
// of the first document and kept warm between documents (loading pdf.js and Tesseract costs ~1.5 s), and
// replaced by a fresh one once idle for a minute. It is killed when its memory (resident set, polled from
// /proc) goes over the limit, when parsing takes too long, or when the job is cancelled, and a fresh one
// replaces it. Only that document fails.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { ParseError, type ParsedDocument } from "./parsers/index.ts";
import type { PageAllowance } from "./parsers/page-limit.ts";
import { parserEnvironment } from "../runtime/allocator.ts";
import { PARSE_CHILD_COMMAND, type ChildReady, type ParseReply, type ParseRequest } from "./parse-protocol.ts";

export interface ParseProcessOptions {
  /** Resident memory the child may use, in MiB, before it is killed. */
  memoryMb: number;
  timeoutMs: number;
  /** Told each new child's pid, so that whoever may terminate this worker can kill the child too. */
  started?(pid: number): void;
  /** IDLE_RECYCLE_MS unless given. */
  idleRecycleMs?: number;
}

/** A flate bomb grows its parser by ~300 MB/s: polled every 100 ms, it could pass the limit by ~30 MB first. */
const MEMORY_POLL_MS = 20;
/** A warm child that kept more than this share of the limit after a document is replaced, so the next document starts small. */
const RECYCLE_SHARE = 0.5;
/**
 * A child idle this long that holds more than IDLE_KEEP_MB is replaced by a fresh one (~33 MB): pdf.js and
 * Tesseract, loaded by the documents that needed them, kept it at 200-350 MB per worker for as long as no
 * document came. The next PDF then loads pdf.js again (~0.3 s), the next scan Tesseract (~1 s).
 */
const IDLE_RECYCLE_MS = 60_000;
const IDLE_KEEP_MB = 64;

type StopReason = "memory" | "timeout" | "recycled" | "idle" | "closed" | { aborted: unknown };

interface Child {
  proc: Subprocess;
  ready: Promise<void>;
  /** It started up; one that dies before that is not replaced until the next parse asks for one. */
  wasReady: boolean;
  /** Why the parent killed it; unset when it died on its own. */
  stopReason?: StopReason;
  reply?: (reply: ParseReply) => void;
}

export class ParseProcess {
  private child: Child | null = null;
  private lastRequestId = 0;
  private closed = false;
  private idleTimer: Timer | null = null;

  constructor(private readonly options: ParseProcessOptions) {}

  /** Starts the child now (it is started on demand otherwise). */
  warm(): void {
    if (!this.closed) this.child ??= this.spawn();
  }

  /** Parses a stored file in the child; rejects with a ParseError for the user, or with `signal.reason` when aborted. */
  async parse(path: string, fileType: string, fileName: string, signal: AbortSignal, allowance: PageAllowance | null = null): Promise<ParsedDocument> {
    signal.throwIfAborted();
    this.clearIdleTimer();
    const child = (this.child ??= this.spawn());
    const requestId = ++this.lastRequestId;
    const stop = (reason: StopReason) => this.kill(child, reason);
    const onAbort = () => stop({ aborted: signal.reason });
    signal.addEventListener("abort", onAbort);
    const timer = setTimeout(() => stop("timeout"), this.options.timeoutMs);
    const watcher = setInterval(() => {
      if ((residentMb(child.proc.pid) ?? 0) > this.options.memoryMb) stop("memory");
    }, MEMORY_POLL_MS);
    try {
      const reply = await new Promise<ParseReply>((resolve, reject) => {
        child.reply = (reply) => reply.requestId === requestId && resolve(reply);
        child.proc.exited.then(() => reject(this.exitError(child)));
        child.ready.then(() => child.proc.send({ requestId, path, fileType, fileName, allowance } satisfies ParseRequest), reject);
      });
      if (!reply.ok) {
        throw new ParseError(reply.message, { pageCount: reply.pageCount ?? undefined, cause: reply.cause === null ? undefined : reply.cause });
      }
      return reply.parsed;
    } finally {
      clearTimeout(timer);
      clearInterval(watcher);
      signal.removeEventListener("abort", onAbort);
      child.reply = undefined;
      if (this.child === child && (residentMb(child.proc.pid) ?? 0) > RECYCLE_SHARE * this.options.memoryMb) stop("recycled");
      this.recycleWhenIdle();
    }
  }

  private recycleWhenIdle(): void {
    this.clearIdleTimer();
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      const child = this.child;
      if (child && (residentMb(child.proc.pid) ?? 0) > IDLE_KEEP_MB) this.kill(child, "idle");
    }, this.options.idleRecycleMs ?? IDLE_RECYCLE_MS);
    this.idleTimer.unref();
  }

  private clearIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  /** Kills the child; parse() must not be called afterwards. */
  close(): void {
    this.closed = true;
    this.clearIdleTimer();
    if (this.child) this.kill(this.child, "closed");
  }

  private spawn(): Child {
    const command = Bun.isStandaloneExecutable
      ? [process.execPath, PARSE_CHILD_COMMAND]
      : [process.execPath, join(import.meta.dir, "..", "main.ts"), PARSE_CHILD_COMMAND];
    let markReady!: () => void;
    const child: Child = {
      wasReady: false,
      ready: new Promise((resolve) => (markReady = resolve)),
      proc: Bun.spawn(command, {
        // The embedded runtime's location (QUARRY_RUNTIME_DIR) is in this worker's environment, not the process's original one.
        env: parserEnvironment(process.env),
        stdio: ["ignore", "inherit", "inherit"],
        ipc: (message: ParseReply | ChildReady) => {
          if (!("ready" in message)) return child.reply?.(message);
          child.wasReady = true;
          markReady();
        },
      }),
    };
    child.ready = Promise.race([child.ready, child.proc.exited.then(() => Promise.reject(this.exitError(child)))]);
    child.ready.catch(() => {}); // observed by parse(), when one is waiting
    child.proc.exited.then(() => {
      if (this.child !== child) return;
      this.child = null;
      // Replaced at once, so the next document does not wait for a start (but not in a loop when it cannot start).
      if (child.stopReason !== "closed" && child.wasReady) this.warm();
    });
    this.options.started?.(child.proc.pid);
    return child;
  }

  private kill(child: Child, reason: StopReason): void {
    child.stopReason ??= reason;
    if (this.child === child) this.child = null;
    child.proc.kill("SIGKILL");
    if (reason !== "closed") this.warm();
  }

  /** Why parsing stopped, once the child has exited. */
  private exitError(child: Child): unknown {
    const reason = child.stopReason;
    if (reason === "memory") return new ParseError(`Parsing used more than ${this.options.memoryMb} MB of memory and was stopped`);
    if (reason === "timeout") {
      return new ParseError(`Parsing took longer than ${Math.round(this.options.timeoutMs / 60_000)} minutes and was stopped`);
    }
    if (typeof reason === "object") return reason.aborted;
    const signal = child.proc.signalCode;
    if (reason === undefined && typeof signal === "string" && EXTERNAL_KILLS.has(signal)) return new ParserKilled(`The parser was stopped by ${signal} from outside Quarry`);
    const how = signal ? `signal ${signal}` : `exit code ${child.proc.exitCode}`;
    return new ParseError(`The parser stopped unexpectedly (${how}); the file may be malformed`);
  }
}

/**
 * Signals that stop a parser from outside, which Quarry did not send (it kills only for memory, time,
 * cancellation or its own stop): the kernel's out-of-memory killer, an operator. The file is not at fault,
 * so the document is processed again (up to the attempts a crashed worker gets) instead of failing as
 * malformed; a parser that crashes on its own (SIGSEGV, SIGABRT, an exit code) still fails it.
 */
const EXTERNAL_KILLS = new Set<string>(["SIGKILL", "SIGTERM", "SIGINT", "SIGHUP"]);

export class ParserKilled extends Error {
  override name = "ParserKilled";
}

/** The process's resident memory in MiB, or null when it cannot be read (gone, or no /proc). */
function residentMb(pid: number): number | null {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}
