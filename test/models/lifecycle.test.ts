// Model lifecycle: the store remembers which embedder made its vectors; starting with another one is
// refused until `quarry reindex` re-embeds every chunk.
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateTestModels } from "../../scripts/gen-test-models.ts";
import { loadConfig } from "../../src/config.ts";
import { reindex } from "../../src/cli/reindex.ts";
import { signup, startTestServer, waitForDocument } from "../helpers/server.ts";

const dataDir = mkdtempSync(join(tmpdir(), "quarry-lifecycle-"));
const modelsDir = generateTestModels();
const tinyModel = { QUARRY_MODELS_DIR: modelsDir, QUARRY_EMBED_MODEL: "tiny-encoder" };
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function storedVectors() {
  const db = new Database(join(dataDir, "quarry.db"), { readonly: true });
  try {
    const settings = Object.fromEntries(
      db.query<{ key: string; value: string }, []>("SELECT key, value FROM settings").all().map((r) => [r.key, r.value]),
    );
    const chunks = db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM chunks").get()!.n;
    return { model: settings.embedding_model, dimension: Number(settings.embedding_dimension), chunks };
  } finally {
    db.close();
  }
}

test("a store made with one embedder is refused by another until reindex", async () => {
  const first = await startTestServer({ dataDir, env: tinyModel });
  const account = await signup(first);
  const kb = (await first.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "kb" } })).body.data;
  const doc = await first.request("POST", `/v1/knowledge-bases/${kb.id}/documents/text`, {
    token: account.apiKey,
    body: { text: "the quick brown fox jumps over the lazy dog. ".repeat(20) },
  });
  expect((await waitForDocument(first, account.apiKey, kb.id, doc.body.data.id)).status).toBe("ready");
  await first.stop();
  const before = storedVectors();
  expect(before.model).toBe("tiny-encoder");
  expect(before.chunks).toBeGreaterThan(0);

  // The default model (use-lite, 512-d) must not silently mix with the tiny model's 32-d vectors.
  await expect(startTestServer({ dataDir })).rejects.toThrow(/tiny-encoder.*quarry reindex/s);

  const lines: string[] = [];
  const done = await reindex(loadConfig({ QUARRY_DATA_DIR: dataDir }), (line) => lines.push(line));
  expect(done).toBe(before.chunks);
  expect(lines.at(-1)).toMatch(/^Done: \d+ chunks re-embedded/);
  const after = storedVectors();
  expect(after).toMatchObject({ model: "use-lite", dimension: 512, chunks: before.chunks });

  const second = await startTestServer({ dataDir });
  try {
    const chunks = await second.request("GET", `/v1/knowledge-bases/${kb.id}/documents/${doc.body.data.id}/chunks`, { token: account.apiKey });
    expect(chunks.status).toBe(200);
    expect(chunks.body.data.length).toBe(before.chunks);
  } finally {
    await second.stop();
  }
}, 120_000);

test("an interrupted reindex keeps the server from starting, and goes on where it stopped when run again", async () => {
  const dir = mkdtempSync(join(tmpdir(), "quarry-reindex-"));
  try {
    const first = await startTestServer({ dataDir: dir, env: { ...tinyModel, QUARRY_LIMITS: "off" } });
    const account = await signup(first);
    const kb = (await first.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "kb" } })).body.data;
    const words = Array.from({ length: 250 }, (_, i) => `word${i}`).join(" ");
    const doc = await first.request("POST", `/v1/knowledge-bases/${kb.id}/documents/text`, { token: account.apiKey, body: { text: words } });
    const ready = await waitForDocument(first, account.apiKey, kb.id, doc.body.data.id);
    expect(ready.chunk_count).toBeGreaterThan(64);
    await first.stop();
    const vectors = () => {
      const db = new Database(join(dir, "quarry.db"), { readonly: true });
      try {
        return db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM chunk_vectors_rowids").get()!.n;
      } finally {
        db.close();
      }
    };

    await expect(startTestServer({ dataDir: dir })).rejects.toThrow(/tiny-encoder.*quarry reindex/s);

    // Stopped after its first batch of 64, as by Ctrl-C.
    const config = loadConfig({ QUARRY_DATA_DIR: dir });
    const interrupted = reindex(config, (line) => {
      if (line.startsWith("  64/")) throw new Error("interrupted");
    });
    await expect(interrupted).rejects.toThrow("interrupted");
    expect(vectors()).toBe(64);
    await expect(startTestServer({ dataDir: dir })).rejects.toThrow(new RegExp(`stopped after 64 of ${ready.chunk_count} chunks.*quarry reindex`, "s"));

    const lines: string[] = [];
    expect(await reindex(config, (line) => lines.push(line))).toBe(ready.chunk_count - 64);
    expect(lines[0]).toBe(`Resuming the re-embedding of ${ready.chunk_count} chunks with use-lite (512-d)`);
    expect(lines[1]).toStartWith(`  ${Math.min(128, ready.chunk_count)}/${ready.chunk_count} chunks`);
    expect(vectors()).toBe(ready.chunk_count);
    const second = await startTestServer({ dataDir: dir, env: { QUARRY_LIMITS: "off" } });
    try {
      const last = "word249";
      const found = await second.request("POST", `/v1/knowledge-bases/${kb.id}/search`, { token: account.apiKey, body: { query: last, top_k: 50 } });
      expect(found.status).toBe(200);
      expect(found.body.data.usage.chunks_searched).toBe(ready.chunk_count);
    } finally {
      await second.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);

test("reindex on a data directory without a database refuses and creates nothing", async () => {
  const dir = join(tmpdir(), `quarry-no-store-${process.pid}`);
  await expect(reindex(loadConfig({ QUARRY_DATA_DIR: dir }))).rejects.toThrow(`No Quarry database at ${join(dir, "quarry.db")}`);
  expect(existsSync(dir)).toBe(false);
});
