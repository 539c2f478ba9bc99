// The JWT signing secret: QUARRY_JWT_SECRET when set (at least 32 bytes, checked by config.ts), otherwise
// generated once and kept (mode 0600) in the data dir so tokens survive restarts.
import { chmodSync, existsSync, readFileSync, writeFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, MIN_JWT_SECRET_BYTES } from "../config.ts";

/** The file in the data dir that keeps a generated secret. */
export const JWT_SECRET_FILE = "jwt-secret";

export function resolveJwtSecret(configured: string | null, dataDir: string): string {
  if (configured) return configured;
  const path = join(dataDir, JWT_SECRET_FILE);
  if (existsSync(path)) return readKeptSecret(path);
  const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(48))).toString("base64url");
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, secret, { mode: 0o600 });
  renameSync(tmp, path);
  return secret;
}

/**
 * The kept secret, held to the length QUARRY_JWT_SECRET must have: a file cut short or emptied by hand
 * would otherwise sign tokens anyone could forge (5 bytes), or fail every signup and login after creating
 * the account (empty).
 */
function readKeptSecret(path: string): string {
  // Also a file kept by a version that did not restrict it. Its errors (a file this user cannot change, a
  // read-only mount) go to main.ts, which says what the user running Quarry needs.
  chmodSync(path, 0o600);
  let secret: string;
  try {
    secret = readFileSync(path, "utf8").trim();
  } catch (error) {
    throw new ConfigError(`cannot read the JWT secret kept in ${path}: ${(error as Error).message}`);
  }
  const bytes = Buffer.byteLength(secret);
  if (bytes < MIN_JWT_SECRET_BYTES) {
    throw new ConfigError(
      `the JWT secret kept in ${path} is ${bytes} bytes, under the ${MIN_JWT_SECRET_BYTES} required: remove the file to have a new ` +
        "one generated (dashboard sessions then end; API keys keep working), or set QUARRY_JWT_SECRET",
    );
  }
  return secret;
}
