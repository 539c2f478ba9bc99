// Shared by the search tests: a knowledge base filled with text documents through the API, and a
// search call that fails loudly on an unexpected status.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { signup, waitForDocument, type TestAccount, type TestServer } from "../helpers/server.ts";

export interface SearchKb {
  account: TestAccount;
  kbId: string;
  /** document id by the name it was given */
  docs: Record<string, string>;
}

export interface TextDoc {
  name: string;
  text: string;
  metadata?: Record<string, unknown>;
}

export async function createKb(server: TestServer, account?: TestAccount): Promise<SearchKb> {
  const owner = account ?? (await signup(server));
  const res = await server.request("POST", "/v1/knowledge-bases", { token: owner.apiKey, body: { name: "search" } });
  if (res.status !== 201) throw new Error(`create kb: ${res.status} ${JSON.stringify(res.body)}`);
  return { account: owner, kbId: res.body.data.id, docs: {} };
}

/** Adds the documents and waits until every one is ready. */
export async function addDocs(server: TestServer, kb: SearchKb, docs: TextDoc[]): Promise<void> {
  const ids = await Promise.all(
    docs.map(async (doc) => {
      const res = await server.request("POST", `/v1/knowledge-bases/${kb.kbId}/documents/text`, { token: kb.account.apiKey, body: doc });
      if (res.status !== 202) throw new Error(`add ${doc.name}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.data.id as string;
    }),
  );
  for (const [i, id] of ids.entries()) {
    const doc = await waitForDocument(server, kb.account.apiKey, kb.kbId, id);
    if (doc.status !== "ready") throw new Error(`${docs[i].name} ${doc.status}: ${doc.error_detail}`);
    kb.docs[docs[i].name] = id;
  }
}

export function searchRaw(server: TestServer, kb: SearchKb, body: unknown) {
  return server.request("POST", `/v1/knowledge-bases/${kb.kbId}/search`, { token: kb.account.apiKey, body });
}

export async function search(server: TestServer, kb: SearchKb, body: Record<string, unknown>) {
  const res = await searchRaw(server, kb, body);
  if (res.status !== 200) throw new Error(`search ${JSON.stringify(body)}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as {
    query: string;
    results: { chunk_id: string; document_id: string; document_name: string; text: string; score: number; metadata?: any; document_metadata?: any }[];
    usage: { embedding_tokens: number; rerank_applied: boolean; rerank_calls: number; chunks_searched: number; search_mode: string };
  };
}

/** Names of the documents of the results, in result order (repeats removed). */
export function docNames(kb: SearchKb, results: { document_id: string }[]): string[] {
  const byId = new Map(Object.entries(kb.docs).map(([name, id]) => [id, name]));
  return [...new Set(results.map((r) => byId.get(r.document_id) ?? r.document_id))];
}

export const TOPICS: TextDoc[] = [
  {
    name: "volcano",
    text: "Volcanoes erupt when magma rises through the crust. Lava flows, ash clouds and pyroclastic flows make eruptions dangerous for nearby towns.",
    metadata: { topic: "geology", year: 2019, published: "2019-03-01", tags: ["earth", "hazard"], featured: true },
  },
  {
    name: "baking",
    text: "To bake sourdough bread, feed the starter, mix flour and water, let the dough rise overnight and bake it in a hot oven until the crust is golden.",
    metadata: { topic: "cooking", year: 2021, published: "2021-07-15T10:00:00Z", tags: ["food"], featured: false },
  },
  {
    name: "football",
    text: "The football match ended two to one after a late goal; the striker scored with a header from a corner kick in the final minute.",
    metadata: { topic: "sports", year: 2022, published: "2022-11-20", tags: ["ball", "team"] },
  },
  {
    name: "photosynthesis",
    text: "Photosynthesis in green plants turns sunlight, water and carbon dioxide into glucose and oxygen inside the chloroplasts of leaf cells.",
    metadata: { topic: "biology", year: 2020, published: "2020-05-05", featured: true },
  },
  {
    name: "tax",
    text: "Income tax returns are due in April; keep receipts for deductions such as charitable donations and home office expenses.",
    metadata: { topic: "finance", year: "2023", published: "not a date" },
  },
];

/** The knowledge base's segment folders (generations) in the data dir, oldest first. */
export function segments(dataDir: string, kbId: string): string[] {
  const dir = join(dataDir, "indexes", kbId);
  // By watermark, as numbers: as strings "110" came before "67", and the newest was taken for an older one.
  return existsSync(dir) ? readdirSync(dir).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(a) - Number(b)) : [];
}

/** Waits (up to a minute) until the index worker has built the knowledge base's first segment. */
export async function waitForSegment(dataDir: string, kbId: string): Promise<void> {
  for (let waited = 0; waited < 60_000; waited += 200) {
    if (segments(dataDir, kbId).length > 0) return;
    await Bun.sleep(200);
  }
  throw new Error("no segment was built");
}
