// Sends a case over a plain socket, byte for byte: fetch would resolve "..", re-encode paths and refuse
// control bytes in headers, which is exactly what the cases need to send.
import { connect } from "node:net";
import type { FuzzRequest } from "./case.ts";

export interface FuzzResponse {
  /** 0: no HTTP answer at all (connection closed or timed out first). */
  status: number;
  headers: Record<string, string>;
  text: string;
  json: unknown;
  ms: number;
  /** Why there was no answer, or why it could not be read. */
  error?: string;
  requestBytes: number;
}

const encoder = new TextEncoder();

function bodyBytes(body: FuzzRequest["body"]): Uint8Array {
  if (body === undefined) return new Uint8Array(0);
  return typeof body === "string" ? encoder.encode(body) : body;
}

function headerPairs(headers: FuzzRequest["headers"]): [string, string][] {
  if (!headers) return [];
  return Array.isArray(headers) ? headers : Object.entries(headers);
}

function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  while (offset < data.length) {
    const lineEnd = data.indexOf("\r\n", offset);
    if (lineEnd < 0) break;
    const size = parseInt(data.subarray(offset, lineEnd).toString("latin1"), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

function parseResponse(raw: Buffer): Omit<FuzzResponse, "ms" | "requestBytes"> {
  const headEnd = raw.indexOf("\r\n\r\n");
  if (headEnd < 0) return { status: 0, headers: {}, text: "", json: undefined, error: raw.length ? "truncated response head" : "no response" };
  const [statusLine, ...lines] = raw.subarray(0, headEnd).toString("latin1").split("\r\n");
  const status = Number(statusLine.split(" ")[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = raw.subarray(headEnd + 4);
  if (headers["transfer-encoding"]?.includes("chunked")) body = dechunk(body);
  else if (headers["content-length"]) body = body.subarray(0, Number(headers["content-length"]));
  const text = body.toString("utf8");
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: Number.isInteger(status) ? status : 0, headers, text, json };
}

/** A whole response has arrived (the server may keep the socket open despite Connection: close). */
function responseComplete(raw: Buffer): boolean {
  const headEnd = raw.indexOf("\r\n\r\n");
  if (headEnd < 0) return false;
  const head = raw.subarray(0, headEnd).toString("latin1").toLowerCase();
  const length = /\r\ncontent-length:\s*(\d+)/.exec(head);
  if (length) return raw.length - headEnd - 4 >= Number(length[1]);
  if (head.includes("transfer-encoding: chunked")) return raw.subarray(raw.length - 5).toString("latin1") === "0\r\n\r\n";
  return false;
}

export async function send(
  host: { hostname: string; port: number },
  request: FuzzRequest,
  authorization: string | undefined,
  timeoutMs: number,
): Promise<FuzzResponse> {
  const bytes = bodyBytes(request.body);
  const pairs = headerPairs(request.headers);
  const has = (name: string) => pairs.some(([key]) => key.toLowerCase() === name);
  const head: [string, string][] = [["Host", `${host.hostname}:${host.port}`]];
  if (authorization !== undefined) head.push(["Authorization", authorization]);
  head.push(...pairs);
  if (request.body !== undefined && !has("content-length") && !has("transfer-encoding")) head.push(["Content-Length", String(bytes.length)]);
  head.push(["Connection", "close"]);
  const headText = `${request.method} ${request.path} HTTP/1.1\r\n${head.map(([k, v]) => `${k}: ${v}`).join("\r\n")}\r\n\r\n`;
  // latin1 keeps each char one byte, so a header can carry raw (even invalid UTF-8) bytes
  const payload = Buffer.concat([Buffer.from(headText, "latin1"), bytes]);
  const started = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let error: string | undefined;
    let settled = false;
    const socket = connect(host.port, host.hostname);
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const parsed = parseResponse(Buffer.concat(chunks));
      resolve({ ...parsed, error: parsed.status ? undefined : (error ?? parsed.error), ms: performance.now() - started, requestBytes: payload.length });
    };
    const timer = setTimeout(() => {
      error = `timed out after ${timeoutMs} ms`;
      finish();
    }, timeoutMs);
    socket.on("connect", () => socket.write(payload));
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      if (responseComplete(Buffer.concat(chunks))) finish();
    });
    socket.on("error", (e: NodeJS.ErrnoException) => {
      error = e.code ?? e.message; // the server may answer and close before the whole body is sent
    });
    socket.on("close", finish);
  });
}
