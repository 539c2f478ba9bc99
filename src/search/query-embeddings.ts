// Query embeddings kept per knowledge base and query text, the least recently used dropped first: the same
// question asked again (an application retrying, a dashboard re-running a search, an evaluation loop, a
// hybrid search after a vector one) skips the model, 1-2 ms of a core for a short query and ~10 ms for a
// paragraph. An embedding depends only on the text and the model, which cannot change while the server
// runs. Keys include the knowledge base, so that one account's searches never answer faster because
// another account asked the same thing (a timing channel between tenants).
import type { EmbedResult } from "../models/types.ts";

/** Longer queries are embedded every time: a key holds its text, and long texts rarely repeat. */
const MAX_CACHED_QUERY_CHARS = 2000;

export interface QueryEmbedding {
  vector: Float32Array;
  tokens: number;
}

export class QueryEmbeddingCache {
  private readonly entries = new Map<string, Promise<QueryEmbedding>>();
  hits = 0;
  misses = 0;

  /** `capacity` 0 turns the cache off. */
  constructor(readonly capacity: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** The query's embedding in this knowledge base: kept, being made (shared), or made now by `embed`. */
  async get(kbId: string, query: string, embed: () => Promise<EmbedResult>): Promise<QueryEmbedding> {
    if (this.capacity === 0 || query.length > MAX_CACHED_QUERY_CHARS) return first(await embed());
    const key = `${kbId}\u0000${query}`;
    let entry = this.entries.get(key);
    if (entry) {
      this.hits++;
      this.entries.delete(key); // re-inserted below as the most recently used
    } else {
      this.misses++;
      entry = embed().then(first);
      // A failure is not kept: the next search asks the model again.
      entry.catch(() => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      });
    }
    this.entries.set(key, entry);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    const { vector, tokens } = await entry;
    // Each search gets its own copy: none can change what the next one is given.
    return { vector: vector.slice(), tokens };
  }
}

function first({ vectors, tokenCounts }: EmbedResult): QueryEmbedding {
  return { vector: vectors[0], tokens: tokenCounts[0] };
}
