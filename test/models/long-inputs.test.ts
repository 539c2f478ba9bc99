// quarry.json "longInputs": "windows": a text longer than the model's window is embedded window by
// window and the vectors are averaged (weighted by tokens), so the whole text counts.
import { afterAll, expect, test } from "bun:test";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OnnxEmbedder } from "../../src/models/onnx-embedder.ts";
import { VOCAB } from "../../scripts/gen-test-models.ts";
import { expectClose, modelDir } from "./tiny-reference.ts";

const dir = join(mkdtempSync(join(tmpdir(), "quarry-windows-")), "tiny-windows");
cpSync(modelDir("tiny-encoder"), dir, { recursive: true });
writeFileSync(join(dir, "quarry.json"), JSON.stringify({ longInputs: "windows" }));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Whole vocabulary words are single WordPiece tokens, so word windows are token windows.
const words = VOCAB.filter((w) => /^[a-z]+$/.test(w)).slice(40, 70);

test("a long text is the normalized, token-weighted mean of its windows", async () => {
  const windowed = await OnnxEmbedder.load(dir, { threads: 1 });
  const plain = await OnnxEmbedder.load(modelDir("tiny-encoder"), { threads: 1 });
  try {
    const size = plain.maxTokens; // one model window
    expect(windowed.maxTokens).toBe(16 * size);
    expect(words.length).toBeGreaterThan(2 * size);
    const pieces = [words.slice(0, size), words.slice(size, 2 * size), words.slice(2 * size)].map((w) => w.join(" "));
    const { vectors: pieceVectors } = await plain.embed(pieces, "passage");
    const weights = [size, size, words.length - 2 * size];
    const expected = new Float32Array(pieceVectors[0].length);
    pieceVectors.forEach((v, i) => v.forEach((x, d) => (expected[d] += x * weights[i])));
    const norm = Math.hypot(...expected);
    const { vectors, tokenCounts } = await windowed.embed([words.join(" ")], "passage");
    expectClose(vectors[0], expected.map((x) => x / norm), 1e-5);
    expect(tokenCounts).toEqual([words.length]);

    // A short text is a single window: same vector as with truncation.
    const short = words.slice(0, 5).join(" ");
    expectClose((await windowed.embed([short], "query")).vectors[0], (await plain.embed([short], "query")).vectors[0], 1e-6);
  } finally {
    await windowed.close();
    await plain.close();
  }
});
