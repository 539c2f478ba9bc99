// Parity proof for the ONNX conversion of USE-Lite: embeds 100 varied texts with the TF.js reference and
// with the converted folders (onnxruntime-node), and compares
//   model:      ONNX fed the reference tokenizer's ids (untruncated: the graph clips itself)
//   end-to-end: ONNX fed tokenizer.json's ids, truncated to quarry.json maxTokens
// for the float32 conversion (converted into a temporary folder; must reach cosine 0.999: the conversion
// is exact) and for the int8 build Quarry runs (models/use-lite; must stay within INT8_MIN_COSINE).
// Exits non-zero if any model cosine, or any end-to-end cosine of a text whose token ids agree, is below
// its bound. Usage: bun scripts/check-use-lite-parity.ts
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { convertUseLite } from "./convert-use-lite.ts";
import { defaultModelDir, prepareDefaultModel } from "./prepare-default-model.ts";
import { cosine, loadOnnxUseLite, loadReferenceUseLite, type ReferenceUseLite } from "./use-lite/parity/runtimes.ts";
import { FLOAT32_MIN_COSINE, INT8_MIN_COSINE, PARITY_SENTENCES } from "./use-lite/parity/sentences.ts";

const BATCH = 10;

interface Row {
  text: string;
  tokens: number;
  sameIds: boolean;
  model: number;
  endToEnd: number;
}

async function compare(reference: ReferenceUseLite, modelDir: string): Promise<{ rows: Row[]; maxTokens: number }> {
  const onnx = await loadOnnxUseLite(modelDir);
  const rows: Row[] = [];
  for (let start = 0; start < PARITY_SENTENCES.length; start += BATCH) {
    const texts = PARITY_SENTENCES.slice(start, start + BATCH);
    const referenceIds = texts.map((t) => reference.tokenize(t));
    const [expected, fromReferenceIds, endToEnd] = await Promise.all([reference.embed(texts), onnx.embedIds(referenceIds), onnx.embed(texts)]);
    texts.forEach((text, i) =>
      rows.push({
        text,
        tokens: referenceIds[i].length,
        sameIds: referenceIds[i].join() === onnx.tokenize(text).join(),
        model: cosine(expected[i], fromReferenceIds[i]),
        endToEnd: cosine(expected[i], endToEnd[i]),
      }),
    );
  }
  await onnx.close();
  return { rows, maxTokens: onnx.maxTokens };
}

const stats = (values: number[]) => {
  const min = Math.min(...values);
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return `min ${min.toFixed(8)} (1 − min = ${(1 - min).toExponential(1)}), mean ${mean.toFixed(8)}`;
};
const preview = (text: string) => JSON.stringify(text.length > 60 ? text.slice(0, 57) + "..." : text);

/** Prints the comparison; returns the texts below the bound. */
function report(label: string, rows: Row[], maxTokens: number, minCosine: number): Row[] {
  const agreeing = rows.filter((r) => r.sameIds);
  console.log(`\n${label}`);
  console.log(`texts: ${rows.length}, ${Math.min(...rows.map((r) => r.tokens))}–${Math.max(...rows.map((r) => r.tokens))} tokens (the model reads the first ${maxTokens})`);
  console.log(`model cosine (reference ids):      ${stats(rows.map((r) => r.model))}`);
  console.log(`token ids identical:               ${agreeing.length}/${rows.length}`);
  console.log(`end-to-end cosine (identical ids): ${stats(agreeing.map((r) => r.endToEnd))}`);
  console.log(`end-to-end cosine (all texts):     ${stats(rows.map((r) => r.endToEnd))}`);
  for (const r of rows.filter((r) => !r.sameIds)) console.log(`  ids differ (end-to-end ${r.endToEnd.toFixed(7)}): ${preview(r.text)}`);
  const failing = rows.filter((r) => r.model < minCosine || (r.sameIds && r.endToEnd < minCosine));
  for (const r of failing) console.error(`  below ${minCosine}: model ${r.model.toFixed(7)}, end-to-end ${r.endToEnd.toFixed(7)} ${preview(r.text)}`);
  if (failing.length === 0) console.log(`OK: cosine ≥ ${minCosine} for every text`);
  return failing;
}

await prepareDefaultModel();
const reference = await loadReferenceUseLite();
const floatDir = mkdtempSync(join(tmpdir(), "use-lite-float32-"));
try {
  convertUseLite(floatDir, "float32");
  const float = await compare(reference, floatDir);
  const int8 = await compare(reference, defaultModelDir);
  const failing = [
    ...report("float32 conversion vs TF.js", float.rows, float.maxTokens, FLOAT32_MIN_COSINE),
    ...report(`int8 build (${defaultModelDir}) vs TF.js`, int8.rows, int8.maxTokens, INT8_MIN_COSINE),
  ];
  if (failing.length > 0) process.exitCode = 1;
} finally {
  rmSync(floatDir, { recursive: true, force: true });
}
