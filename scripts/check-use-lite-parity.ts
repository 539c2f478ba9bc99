// Parity proof for the ONNX conversion of USE-Lite: embeds 100 varied texts with the TF.js
// reference and with models/use-lite (onnxruntime-node) and compares
//   model:      ONNX fed the reference tokenizer's ids (untruncated: the graph clips itself)
//   end-to-end: ONNX fed tokenizer.json's ids, truncated to quarry.json maxTokens
// Exits non-zero if any model cosine, or any end-to-end cosine of a text whose token ids agree,
// is below 0.999. Usage: bun scripts/check-use-lite-parity.ts [modelDir]
import { defaultModelDir, prepareDefaultModel } from "./prepare-default-model.ts";
import { cosine, loadOnnxUseLite, loadReferenceUseLite } from "./use-lite/parity/runtimes.ts";
import { PARITY_SENTENCES } from "./use-lite/parity/sentences.ts";

const MIN_COSINE = 0.999;
const BATCH = 10;

const modelDir = process.argv[2] ?? defaultModelDir;
if (modelDir === defaultModelDir) await prepareDefaultModel();
const reference = await loadReferenceUseLite();
const onnx = await loadOnnxUseLite(modelDir);

const rows: { text: string; tokens: number; sameIds: boolean; model: number; endToEnd: number }[] = [];
for (let start = 0; start < PARITY_SENTENCES.length; start += BATCH) {
  const texts = PARITY_SENTENCES.slice(start, start + BATCH);
  const referenceIds = texts.map((t) => reference.tokenize(t));
  const [expected, fromReferenceIds, endToEnd] = await Promise.all([
    reference.embed(texts),
    onnx.embedIds(referenceIds),
    onnx.embed(texts),
  ]);
  texts.forEach((text, i) => rows.push({
    text,
    tokens: referenceIds[i].length,
    sameIds: referenceIds[i].join() === onnx.tokenize(text).join(),
    model: cosine(expected[i], fromReferenceIds[i]),
    endToEnd: cosine(expected[i], endToEnd[i]),
  }));
}
await onnx.close();

const stats = (values: number[]) => {
  const min = Math.min(...values);
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return `min ${min.toFixed(8)} (1 − min = ${(1 - min).toExponential(1)}), mean ${mean.toFixed(8)}`;
};
const preview = (text: string) => JSON.stringify(text.length > 60 ? text.slice(0, 57) + "..." : text);
const agreeing = rows.filter((r) => r.sameIds);

console.log(`texts: ${rows.length}, ${Math.min(...rows.map((r) => r.tokens))}–${Math.max(...rows.map((r) => r.tokens))} tokens (the model reads the first ${onnx.maxTokens})`);
console.log(`model cosine (reference ids):      ${stats(rows.map((r) => r.model))}`);
console.log(`token ids identical:               ${agreeing.length}/${rows.length}`);
console.log(`end-to-end cosine (identical ids): ${stats(agreeing.map((r) => r.endToEnd))}`);
console.log(`end-to-end cosine (all texts):     ${stats(rows.map((r) => r.endToEnd))}`);
for (const r of rows.filter((r) => !r.sameIds)) console.log(`  ids differ (end-to-end ${r.endToEnd.toFixed(7)}): ${preview(r.text)}`);

const failing = rows.filter((r) => r.model < MIN_COSINE || (r.sameIds && r.endToEnd < MIN_COSINE));
for (const r of failing) console.error(`  below ${MIN_COSINE}: model ${r.model.toFixed(7)}, end-to-end ${r.endToEnd.toFixed(7)} ${preview(r.text)}`);
if (failing.length > 0) process.exit(1);
console.log(`OK: cosine ≥ ${MIN_COSINE} for every text`);
