// The server under attack, as its own process (`bun src/main.ts serve`), so the harness can read its memory
// from /proc, see it die, and restart it on the same data directory.
import { createServer } from "node:net";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";

const REPO = join(import.meta.dir, "..", "..");
const STARTUP_TIMEOUT_MS = 60_000;

export interface ServerOptions {
  dataDir: string;
  env?: Record<string, string>;
  /** Called with each line the server writes to stderr (errors it logged). */
  onStderr?: (line: string) => void;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function rssOf(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) * 1024 : 0;
}

/** Resident memory in bytes of a process alone, and with all its descendants (parser subprocesses). */
export function rssBytes(pid: number): { process: number; tree: number } {
  let own = 0;
  let tree = 0;
  const pending = [pid];
  while (pending.length > 0) {
    const current = pending.pop()!;
    try {
      const rss = rssOf(current);
      if (current === pid) own = rss;
      tree += rss;
      for (const task of readdirSync(`/proc/${current}/task`)) {
        const children = readFileSync(`/proc/${current}/task/${task}/children`, "utf8").trim();
        if (children) pending.push(...children.split(/\s+/).map(Number));
      }
    } catch {
      // the process ended between listing and reading
    }
  }
  return { process: own, tree };
}

export class ServerProcess {
  private process: Subprocess | null = null;
  private port = 0;
  exitCode: number | null = null;
  exitSignal: string | null = null;

  constructor(private readonly options: ServerOptions) {}

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get host(): { hostname: string; port: number } {
    return { hostname: "127.0.0.1", port: this.port };
  }

  get pid(): number | null {
    return this.process && this.alive ? this.process.pid : null;
  }

  get alive(): boolean {
    return this.process !== null && this.process.exitCode === null && this.process.signalCode === null;
  }

  async start(): Promise<void> {
    if (this.port === 0) this.port = await freePort();
    const child = Bun.spawn([process.execPath, "src/main.ts", "serve"], {
      cwd: REPO,
      env: {
        ...process.env,
        PORT: String(this.port),
        QUARRY_HOST: "127.0.0.1",
        QUARRY_DATA_DIR: this.options.dataDir,
        ...this.options.env,
      },
      stdout: "ignore",
      stderr: "pipe",
    });
    this.process = child;
    this.exitCode = null;
    this.exitSignal = null;
    void child.exited.then(() => {
      if (this.process !== child) return;
      this.exitCode = child.exitCode;
      this.exitSignal = child.signalCode === null ? null : String(child.signalCode);
    });
    void this.pipeStderr(child);
    await this.waitHealthy(STARTUP_TIMEOUT_MS);
  }

  private async pipeStderr(child: Subprocess): Promise<void> {
    const reader = (child.stderr as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      const lines = buffer.split("\n");
      buffer = lines.pop()!;
      for (const line of lines) this.options.onStderr?.(line);
    }
  }

  /** True when GET /api/health answers 200 within the timeout. */
  async healthy(timeoutMs = 5_000): Promise<boolean> {
    try {
      const res = await fetch(`${this.baseUrl}/api/health`, { signal: AbortSignal.timeout(timeoutMs) });
      await res.arrayBuffer();
      return res.status === 200;
    } catch {
      return false;
    }
  }

  private async waitHealthy(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.alive) throw new Error(`server exited during startup (code ${this.exitCode}, signal ${this.exitSignal})`);
      if (await this.healthy(1_000)) return;
      await Bun.sleep(100);
    }
    throw new Error(`server not healthy after ${timeoutMs} ms`);
  }

  async stop(): Promise<void> {
    if (!this.process || !this.alive) return;
    this.process.kill("SIGTERM");
    const killed = await Promise.race([this.process.exited.then(() => true), Bun.sleep(10_000).then(() => false)]);
    if (!killed) this.process.kill("SIGKILL");
    await this.process.exited;
  }
}
