// Models on their own threads (src/models/threaded-models.ts), as the server runs them: the same vectors,
// scores and description as models loaded in the calling thread, the loader's message when a model cannot
// be loaded, and requests answered in order when many are in flight at once.
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadModels } from "../../src/models/load.ts";
import { loadThreadedModels } from "../../src/models/threaded-models.ts";
import { MODELS_DIR } from "./tiny-reference.ts";

const dataDir = mkdtempSync(join(tmpdir(), "quarry-threaded-"));
const options = { modelsDir: MODELS_DIR, embedModel: "tiny-encoder", rerankModel: "tiny-reranker", threads: 1 };

test("an embedder and a reranker on threads answer exactly as in this thread", async () => {
  const [local, threaded] = [await loadModels(options), await loadThreadedModels(dataDir, options)];
  try {
    expect(threaded.description).toEqual(local.description);
    const texts = ["the quick brown fox", "fox", "a much longer text about a lazy dog that sleeps all day"];
    for (const side of ["query", "passage"] as const) expect(await threaded.embedder.embed(texts, side)).toEqual(await local.embedder.embed(texts, side));
    expect(await threaded.reranker!.score("fox", texts)).toEqual(await local.reranker!.score("fox", texts));

    // Many requests in flight: each gets its own answer.
    const queries = Array.from({ length: 40 }, (_, i) => `query number ${i} about ${i % 2 ? "foxes" : "dogs"}`);
    const answers = await Promise.all(queries.map((query) => threaded.embedder.embed([query], "query")));
    for (const [i, query] of queries.entries()) expect(answers[i]).toEqual(await local.embedder.embed([query], "query"));
  } finally {
    await Promise.all([local.embedder.close(), local.reranker?.close(), threaded.embedder.close(), threaded.reranker?.close()]);
  }
});

test("a model that cannot be loaded fails with the loader's message", async () => {
  const missing = { ...options, rerankModel: "no-such-reranker" };
  const expected = await loadModels(missing).then(
    () => "loaded",
    (error: Error) => error.message,
  );
  expect(expected).toContain('Reranking model "no-such-reranker" not found');
  expect(
    await loadThreadedModels(dataDir, missing).then(
      () => "loaded",
      (error: Error) => error.message,
    ),
  ).toBe(expected);
  rmSync(dataDir, { recursive: true, force: true });
});
