// The commands that work on an existing store (reindex, accounts) refuse a data directory without a
// database, before anything is created in it: a mistyped --data-dir must not leave a new store behind.
import { existsSync } from "node:fs";
import { databasePathIn } from "../store/database-file.ts";
import { CliError } from "./cli-error.ts";
import { assertDatabaseNotLost } from "../store/missing-database.ts";

export function assertDatabaseExists(dataDir: string): void {
  const databasePath = databasePathIn(dataDir);
  // Gone from beside stored files and indexes: that message says more (restore it from a backup).
  assertDatabaseNotLost(databasePath);
  if (!existsSync(databasePath)) throw new CliError(`No Quarry database at ${databasePath} (set --data-dir or QUARRY_DATA_DIR).`);
}
