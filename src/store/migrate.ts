// Numbered migrations applied in order at startup, each in its own transaction, recorded in schema_migrations.
import type { Database } from "bun:sqlite";
import { MIGRATIONS } from "./migrations/index.ts";
import type { Migration } from "./migrations/migration.ts";

export function migrate(db: Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  const applied = new Set(
    db.query<{ version: number }, []>("SELECT version FROM schema_migrations").all().map((r) => r.version),
  );
  const ordered = [...MIGRATIONS].sort((a, b) => a.version - b.version);
  const newest = ordered[ordered.length - 1].version;
  const unknown = [...applied].filter((version) => version > newest);
  if (unknown.length > 0) {
    // A downgrade: this build would read and write tables whose shape it does not know (a search of a
    // newer data dir failed on a table an upgrade had replaced). Refused before anything is touched.
    throw new Error(
      `the database was written by a newer Quarry (schema version ${Math.max(...unknown)}; this build knows up to ${newest}): run that version or a newer one, or restore a backup made by this one`,
    );
  }
  for (const m of ordered) {
    if (applied.has(m.version)) continue;
    db.transaction(() => {
      applyMigration(db, m);
      db.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        m.version,
        m.name,
        new Date().toISOString(),
      );
    }).immediate();
  }
}

/** The migration's changes, without recording it (its test runs it again on rows made to look older). */
export function applyMigration(db: Database, migration: Migration): void {
  if (migration.sql) db.exec(migration.sql);
  migration.apply?.(db);
}
