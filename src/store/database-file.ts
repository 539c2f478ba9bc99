// Where a data directory keeps its database. A module of its own, free of SQLite: the quarry command checks
// the path before it loads anything else (cli/existing-database.ts), and parser child processes start there too.
import { join } from "node:path";

/** The database's file name in the data directory. */
export const DATABASE_FILE = "quarry.db";

/** Where the data directory's database is. */
export function databasePathIn(dataDir: string): string {
  return join(dataDir, DATABASE_FILE);
}
