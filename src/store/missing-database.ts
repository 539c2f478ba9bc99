// A data directory whose database is gone (deleted, or an empty file left by a failed copy) while its stored
// files and search indexes remain: opening it would create an empty database, and the next server start
// would sweep every file as unreferenced (file-sweep.ts) and every index as unknown. Nothing is opened then.
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

/** Data that only a database can account for, by folder of the data directory. */
const DATA_FOLDERS = ["files", "indexes"];

/** Throws when `databasePath` is missing or empty while its data directory holds stored files or indexes. */
export function assertDatabaseNotLost(databasePath: string): void {
  const exists = existsSync(databasePath);
  if (exists && statSync(databasePath).size > 0) return;
  const dataDir = dirname(databasePath);
  const holding = DATA_FOLDERS.filter((folder) => {
    const path = join(dataDir, folder);
    return existsSync(path) && statSync(path).isDirectory() && readdirSync(path).length > 0;
  });
  if (holding.length === 0) return;
  const folders = holding.map((folder) => `${folder}/`).join(" and ");
  throw new Error(
    `the data directory ${dataDir} holds ${folders} but its database ${databasePath} is ${exists ? "empty" : "missing"}; ` +
      `a new one would leave them unaccounted for, and they would be deleted. Restore the database from a backup, or move ${folders} away to start afresh`,
  );
}
