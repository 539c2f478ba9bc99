// Embeds the texts it is sent with the default model (models/use-lite) on its own thread, as an ingestion
// worker would, and posts the vectors back.
import { OnnxEmbedder } from "../../src/models/onnx-embedder.ts";
import { defaultModelDir } from "../../scripts/prepare-default-model.ts";

declare const self: Worker;

self.onmessage = async (event: MessageEvent<string[]>) => {
  const embedder = await OnnxEmbedder.load(defaultModelDir, { threads: 1 });
  const { vectors } = await embedder.embed(event.data, "passage");
  self.postMessage(vectors.map((v) => Array.from(v)));
  await embedder.close();
};
