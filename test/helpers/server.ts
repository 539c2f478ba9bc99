// Starts the real Quarry (real SQLite file in a temp dir, real default model) on a free port, and gives
// tests a small HTTP client for it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import type { Clock } from "../../src/clock.ts";

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** multipart form fields; Blob/File values are sent as files */
  form?: Record<string, string | Blob>;
  headers?: Record<string, string>;
}

export interface TestServer {
  url: string;
  dataDir: string;
  server: RunningServer;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  stop(): Promise<void>;
}

/** A clock tests can move forward. */
export class ManualClock implements Clock {
  constructor(private current: Date = new Date()) {}
  now(): Date {
    return new Date(this.current);
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
  set(date: Date): void {
    this.current = new Date(date);
  }
}

export async function startTestServer(
  options: { env?: Record<string, string>; clock?: Clock; dataDir?: string; rateLimitClock?: () => number; stopGraceMs?: number; segmentQuietMs?: number; log?: (line: string) => void } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "quarry-test-"));
  const config = loadConfig({ PORT: "0", QUARRY_HOST: "127.0.0.1", QUARRY_DATA_DIR: dataDir, QUARRY_WORKERS: "1", ...options.env });
  const server = await startServer(config, {
    clock: options.clock,
    rateLimitClock: options.rateLimitClock,
    stopGraceMs: options.stopGraceMs,
    segmentQuietMs: options.segmentQuietMs,
    log: options.log,
  });
  const url = `${server.url}/api`;
  return {
    url,
    dataDir,
    server,
    request: (method, path, requestOptions) => request(url, method, path, requestOptions),
    async stop() {
      await server.stop();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A server run as its own process (the binary, `quarry serve`), shaped like the in-process one for the shared helpers (they only send requests). */
export function serverAt(url: string): TestServer {
  return { request: (method: string, path: string, options?: RequestOptions) => request(url, method, path, options) } as TestServer;
}

export async function request<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: BodyInit | undefined;
  if (options.form) {
    const form = new FormData();
    for (const [key, value] of Object.entries(options.form)) form.append(key, value);
    body = form;
  } else if (options.body !== undefined) {
    headers["content-type"] ??= "application/json";
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
  }
  const response = await fetch(baseUrl + path, { method, headers, body });
  const text = await response.text();
  let parsed: any = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // non-JSON bodies (the docs page) stay text
  }
  return { status: response.status, body: parsed, headers: response.headers };
}

let emailCounter = 0;

export interface TestAccount {
  apiKey: string;
  token: string;
  id: string;
  email: string;
}

export async function signup(server: TestServer, email?: string): Promise<TestAccount> {
  const address = email ?? `user${Date.now()}${emailCounter++}@example.com`;
  const res = await server.request("POST", "/auth/signup", { body: { email: address, password: "correct horse battery" } });
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { apiKey: res.body.data.api_key, token: res.body.data.token, id: res.body.data.account.id, email: address };
}

/** Polls a document until it is ready or failed. */
export async function waitForDocument(server: TestServer, token: string, kbId: string, docId: string, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await server.request("GET", `/v1/knowledge-bases/${kbId}/documents/${docId}`, { token });
    if (res.status === 429 && res.body?.error?.code === "RATE_LIMIT_EXCEEDED" && Date.now() < deadline) {
      await Bun.sleep(250); // polling faster than a trial account's 5 requests per second
      continue;
    }
    if (res.status !== 200) throw new Error(`document poll failed: ${res.status} ${JSON.stringify(res.body)}`);
    if (res.body.data.status === "ready" || res.body.data.status === "failed") return res.body.data;
    if (Date.now() > deadline) throw new Error(`document ${docId} still ${res.body.data.status} after ${timeoutMs} ms`);
    await Bun.sleep(100);
  }
}
