// The in-memory search indexes of the knowledge bases searched lately, one KbIndex each. An index unused
// for IDLE_MS is let go (its memory freed) and rebuilt from the database on the next search.
import type { Db } from "../store/db.ts";
import { KbIndex } from "./kb-index.ts";

const IDLE_MS = 60 * 60 * 1000;

export class IndexCache {
  private readonly indexes = new Map<string, KbIndex>();

  constructor(
    private readonly db: Db,
    private readonly dimension: number,
  ) {}

  /** The knowledge base's index, up to date with the database. */
  get(kbId: string): KbIndex {
    this.evictIdle();
    let index = this.indexes.get(kbId);
    if (!index) this.indexes.set(kbId, (index = new KbIndex(this.db, kbId, this.dimension)));
    index.refresh();
    return index;
  }

  private evictIdle(): void {
    const cutoff = performance.now() - IDLE_MS;
    for (const [kbId, index] of this.indexes) if (index.lastUsed < cutoff) this.indexes.delete(kbId);
  }
}
