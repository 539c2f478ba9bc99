// The models a server runs, each on its own thread (threaded-models.ts), off the HTTP thread. No
// busy-waiting ONNX threads: between two query embeddings they took a core from the search threads
// (measured: 2.0 cores busy instead of 1.2 while one query a 5 ms was embedded). And a query, one short
// text, is embedded on one ONNX thread: splitting its operators cost CPU and gained no time (the default
// model: 2.47 ms of CPU a query on 2 threads, 1.87 on one; 1.73 and 1.67 ms elapsed).
import type { Config } from "../config.ts";
import { loadThreadedModels } from "./threaded-models.ts";
import type { SearchModels } from "./types.ts";

export function loadServerModels(config: Config): Promise<SearchModels> {
  return loadThreadedModels(config.dataDir, {
    modelsDir: config.modelsDir,
    embedModel: config.embedModel,
    rerankModel: config.rerankModel,
    spinning: false,
    embedThreads: 1,
  });
}
