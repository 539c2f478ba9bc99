import type { Database } from "bun:sqlite";

export interface Migration {
  version: number;
  name: string;
  sql?: string;
  /** Work SQL alone cannot do, run after `sql` in the same transaction. */
  apply?: (db: Database) => void;
}
