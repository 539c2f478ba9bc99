// The harness's own, well-formed calls (accounts, knowledge bases, document polls), with the retries a
// polite client makes on 429 RATE_LIMIT_EXCEEDED.
import { send, type FuzzResponse } from "./http.ts";
import type { FuzzRequest } from "./case.ts";

export interface Target {
  host: { hostname: string; port: number };
  timeoutMs: number;
}

export interface Tenant {
  email: string;
  apiKey: string;
  token: string;
  kbId: string;
  docId: string;
}

/** How long the harness's own calls wait out rate limits (a case waits less: see harness.ts). */
const SETUP_RATE_WAIT_MS = 120_000;

export function isRateLimited(response: FuzzResponse): boolean {
  return response.status === 429 && (response.json as any)?.error?.code === "RATE_LIMIT_EXCEEDED";
}

/** Sends, waiting out RATE_LIMIT_EXCEEDED answers; returns the final answer and how many there were. */
export async function sendPolitely(
  target: Target,
  request: FuzzRequest,
  authorization: string | undefined,
  maxWaitMs = SETUP_RATE_WAIT_MS,
): Promise<{ response: FuzzResponse; rateLimited: number }> {
  const deadline = Date.now() + maxWaitMs;
  let rateLimited = 0;
  for (;;) {
    const response = await send(target.host, request, authorization, target.timeoutMs);
    if (!isRateLimited(response) || Date.now() > deadline) return { response, rateLimited };
    rateLimited++;
    // Retry-After is whole seconds, rounded up: at 1 s it usually means "a fraction of a second"
    const seconds = Number(response.headers["retry-after"]);
    await Bun.sleep(Number.isFinite(seconds) && seconds > 1 ? Math.min(seconds, 60) * 1000 : 250);
  }
}

async function call(target: Target, method: string, path: string, authorization?: string, body?: unknown): Promise<any> {
  const request: FuzzRequest = { method, path, credential: { kind: "none" } };
  if (body !== undefined) Object.assign(request, { body: JSON.stringify(body), headers: { "Content-Type": "application/json" } });
  const { response } = await sendPolitely(target, request, authorization);
  if (response.status < 200 || response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${response.text.slice(0, 300)}`);
  return response.json;
}

/** A new trial account with one knowledge base holding one small text document. */
export async function newTenant(target: Target, label: string): Promise<Tenant> {
  const email = `${label}-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.com`;
  const signup = await call(target, "POST", "/api/auth/signup", undefined, { email, password: "correct horse battery", name: label });
  const apiKey: string = signup.data.api_key;
  const auth = `Bearer ${apiKey}`;
  const kb = await call(target, "POST", "/api/v1/knowledge-bases", auth, { name: `${label} kb`, metadata: { owner: label } });
  const doc = await call(target, "POST", `/api/v1/knowledge-bases/${kb.data.id}/documents/text`, auth, {
    text: `${label} keeps private notes about quarry retrieval here.`,
    name: `${label}.txt`,
    metadata: { owner: label },
  });
  return { email, apiKey, token: signup.data.token, kbId: kb.data.id, docId: doc.data.id };
}

export function bearer(secret: string): string {
  return `Bearer ${secret}`;
}
