// The settings table: one value per key, for what the store records about itself (the embedding model that
// made the vectors, the next chunk rowid).
import type { Db } from "./db.ts";

export function getSetting(db: Db, key: string): string | null {
  return db.query<{ value: string }, [string]>("SELECT value FROM settings WHERE key = ?").get(key)?.value ?? null;
}

export function setSetting(db: Db, key: string, value: string): void {
  db.query("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(
    key,
    value,
  );
}
