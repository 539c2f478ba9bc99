// Metadata counts toward the plan's storage through the real HTTP API: the bytes used reported by a 429
// storage refusal (trial plan, 50 MB) are the stored files plus the metadata of the account's documents and
// knowledge bases, and replacing metadata with {} frees its bytes.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { signup, startTestServer, type TestServer } from "../helpers/server.ts";

const MB = 1024 * 1024;
let server: TestServer;
beforeAll(async () => {
  // The limiter's clock moves a second per request: this test is about storage, not the rate.
  let rateClockMs = 0;
  server = await startTestServer({ rateLimitClock: () => (rateClockMs += 1000) });
});
afterAll(() => server.stop());

/** Metadata of exactly `size` bytes as JSON. */
function metadataOf(size: number): Record<string, string> {
  return { notes: "n".repeat(size - Buffer.byteLength(JSON.stringify({ notes: "" }))) };
}

test("storage used = files + document and knowledge base metadata; {} frees it", async () => {
  const account = await signup(server);
  const call = (method: string, path: string, options: object = {}) => server.request(method, path, { token: account.apiKey, ...options });
  const kb = await call("POST", "/v1/knowledge-bases", { body: { name: "kb", metadata: metadataOf(20_000) } });
  expect(kb.status).toBe(201);
  const documents = `/v1/knowledge-bases/${kb.body.data.id}/documents`;
  const bigFile = (name: string) => new File([new Uint8Array(30 * MB)], name);

  const first = await call("POST", documents, { form: { file: bigFile("big.pdf"), metadata: JSON.stringify(metadataOf(32 * 1024)) } });
  expect(first.status).toBe(202);
  const text = await call("POST", `${documents}/text`, { body: { text: "Twelve bytes", metadata: metadataOf(10_000) } });
  expect(text.status).toBe(202);

  const refused = await call("POST", documents, { form: { file: bigFile("bigger.pdf") } });
  expect(refused.status).toBe(429);
  expect(refused.body.error.details).toEqual({ resource: "storage", limit: 50 * MB, used: 30 * MB + 12 + 20_000 + 32 * 1024 + 10_000 });

  const cleared = await call("PATCH", `${documents}/${first.body.data.id}`, { body: { metadata: {} } });
  expect(cleared.status).toBe(200);
  await call("PATCH", `/v1/knowledge-bases/${kb.body.data.id}`, { body: { metadata: {} } });
  const again = await call("POST", documents, { form: { file: bigFile("bigger.pdf") } });
  expect(again.status).toBe(429);
  expect(again.body.error.details.used).toBe(30 * MB + 12 + 10_000);
});
