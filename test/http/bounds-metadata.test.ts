// Metadata size limits through the real API, on every way metadata comes in: knowledge base create and
// PATCH, upload and replacement (multipart field), text ingestion and document PATCH. Each limit is refused
// with the path of what broke it; metadata at every limit at once is stored and returned unchanged.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signup, startTestServer, waitForDocument, type ApiResponse, type TestAccount, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let account: TestAccount;
let kbId: string;
let docId: string;

beforeAll(async () => {
  server = await startTestServer({ env: { QUARRY_LIMITS: "off" } });
  account = await signup(server);
  kbId = (await server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "bounds" } })).body.data.id;
  const added = await server.request("POST", `/v1/knowledge-bases/${kbId}/documents/text`, { token: account.apiKey, body: { text: "A short note." } });
  docId = added.body.data.id;
  await waitForDocument(server, account.apiKey, kbId, docId);
});
afterAll(() => server.stop());

const file = () => new File(["Some text to keep."], "note.txt", { type: "text/plain" });

/** Every way metadata enters the service, sending the given metadata as JSON text. */
const RAW_WAYS: Record<string, (json: string) => Promise<ApiResponse>> = {
  "knowledge base create": (json) => server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: `{"name":"m","metadata":${json}}` }),
  "knowledge base PATCH": (json) => server.request("PATCH", `/v1/knowledge-bases/${kbId}`, { token: account.apiKey, body: `{"metadata":${json}}` }),
  "text ingestion": (json) =>
    server.request("POST", `/v1/knowledge-bases/${kbId}/documents/text`, { token: account.apiKey, body: `{"text":"Some text.","metadata":${json}}` }),
  "document PATCH": (json) => server.request("PATCH", `/v1/knowledge-bases/${kbId}/documents/${docId}`, { token: account.apiKey, body: `{"metadata":${json}}` }),
  upload: (json) => server.request("POST", `/v1/knowledge-bases/${kbId}/documents`, { token: account.apiKey, form: { file: file(), metadata: json } }),
  // A document being processed cannot be replaced (409): the previous replacement is waited for.
  replacement: async (json) => {
    await waitForDocument(server, account.apiKey, kbId, docId);
    return server.request("PUT", `/v1/knowledge-bases/${kbId}/documents/${docId}`, { token: account.apiKey, form: { file: file(), metadata: json } });
  },
};
const WAYS = Object.fromEntries(
  Object.entries(RAW_WAYS).map(([way, send]) => [way, (metadata: Record<string, unknown>) => send(JSON.stringify(metadata))]),
);

const keys = (n: number, value: unknown = 1) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, value]));
const nested = (levels: number, leaf: unknown): unknown => (levels === 0 ? leaf : { a: nested(levels - 1, leaf) });
const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** Metadata that is over one limit, and the issue it must get. */
const OVER: [string, Record<string, unknown>, [unknown[], string]][] = [
  ["65 keys", keys(65), [["metadata"], "must have at most 64 keys (this object has 65)"]],
  ["a nested object with 65 keys", { team: "cx", outer: keys(65) }, [["metadata", "outer"], "must have at most 64 keys (this object has 65)"]],
  ["a 257-character key", { ["k".repeat(257)]: 1 }, [["metadata", "k".repeat(257)], "key must be at most 256 characters (this one has 257)"]],
  // Characters are code points: an emoji is one (two UTF-16 units).
  ["a key of 257 emoji", { ["😀".repeat(257)]: 1 }, [["metadata", "😀".repeat(257)], "key must be at most 256 characters (this one has 257)"]],
  [
    "arrays and objects 6 levels deep",
    { a: { b: { c: { d: [[1]] } } } },
    [["metadata", "a", "b", "c", "d", 0], "is nested too deeply: objects and arrays may nest at most 5 levels"],
  ],
  ["250 levels deep", nested(250, 1) as Record<string, unknown>, [["metadata", "a", "a", "a", "a", "a"], "is nested too deeply: objects and arrays may nest at most 5 levels"]],
  ["32 KB and one byte as JSON", { note: "x".repeat(32 * 1024 - bytes({ note: "" }) + 1) }, [["metadata"], "must be at most 32768 bytes as JSON (this one is larger)"]],
  ["5,000 keys", keys(5_000, "value"), [["metadata"], "must be at most 32768 bytes as JSON (this one is larger)"]],
];

describe("over a limit: 400 VALIDATION_ERROR with the path, on every way in", () => {
  for (const [way, send] of Object.entries(WAYS)) {
    test(way, async () => {
      for (const [, metadata, issue] of OVER) {
        const res = await send(metadata);
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe("VALIDATION_ERROR");
        expect(res.body.error.details.issues.map((i: { path: unknown[]; message: string }) => [i.path, i.message])).toEqual([issue]);
      }
    });
  }
});

/** 64 keys, two of 256 characters (one in emoji), objects and arrays 5 levels deep, exactly 32 KB as JSON. */
function atEveryLimit(): Record<string, unknown> {
  const metadata: Record<string, unknown> = { ["k".repeat(256)]: "longest key", ["😀".repeat(256)]: "longest key in emoji", deep: { b: { c: { d: ["five levels"] } } } };
  for (let i = 0; Object.keys(metadata).length < 64; i++) metadata[`field${i}`] = "";
  metadata.field0 = "x".repeat(32 * 1024 - bytes(metadata));
  return metadata;
}

test("metadata at every limit at once is accepted on every way in, and stored unchanged", async () => {
  const metadata = atEveryLimit();
  expect(Object.keys(metadata)).toHaveLength(64);
  expect(bytes(metadata)).toBe(32 * 1024);
  for (const [way, send] of Object.entries(WAYS)) {
    const res = await send(metadata);
    expect({ way, status: res.status }).toEqual({ way, status: way.includes("PATCH") ? 200 : way.includes("create") ? 201 : 202 });
    expect(res.body.data.metadata).toEqual(metadata);
  }
  const doc = await server.request("GET", `/v1/knowledge-bases/${kbId}/documents/${docId}`, { token: account.apiKey });
  expect(doc.body.data.metadata).toEqual(metadata);
});

test('JSON a JavaScript object cannot hold as sent: a "__proto__" key is stored like any other, a number that overflows is refused', async () => {
  const withProto = '{"__proto__":{"x":1},"a":1}';
  for (const [way, send] of Object.entries(RAW_WAYS)) {
    const stored = await send(withProto);
    expect({ way, status: stored.status }).toEqual({ way, status: way.includes("PATCH") ? 200 : way.includes("create") ? 201 : 202 });
    expect({ way, metadata: JSON.stringify(stored.body.data.metadata) }).toEqual({ way, metadata: withProto });

    const overflow = await send('{"a":1e999}');
    expect({ way, status: overflow.status }).toEqual({ way, status: 400 });
    expect(overflow.body.error.details.issues).toEqual([{ path: ["metadata", "a"], message: "must be a finite number (this one overflows)" }]);
  }
  const kb = await server.request("GET", `/v1/knowledge-bases/${kbId}`, { token: account.apiKey });
  expect(JSON.stringify(kb.body.data.metadata)).toBe(withProto);
  await waitForDocument(server, account.apiKey, kbId, docId);
  const found = await server.request("POST", `/v1/knowledge-bases/${kbId}/search`, {
    token: account.apiKey,
    body: { query: "text to keep", mode: "keyword", rerank: false, filter: { a: { $eq: 1 } } },
  });
  expect(found.status).toBe(200);
  const hit = found.body.data.results.find((r: { document_id: string }) => r.document_id === docId);
  expect(JSON.stringify(hit.document_metadata)).toBe(withProto);
});
