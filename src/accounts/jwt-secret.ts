// The JWT signing secret: QUARRY_JWT_SECRET when set (at least 32 bytes, checked by config.ts), otherwise
// generated once and kept (mode 0600) in the data dir so tokens survive restarts.
import { chmodSync, existsSync, readFileSync, writeFileSync, renameSync } from "node:fs";
import { join } from "node:path";

/** The file in the data dir that keeps a generated secret. */
export const JWT_SECRET_FILE = "jwt-secret";

export function resolveJwtSecret(configured: string | null, dataDir: string): string {
  if (configured) return configured;
  const path = join(dataDir, JWT_SECRET_FILE);
  if (existsSync(path)) {
    chmodSync(path, 0o600); // also a file kept by a version that did not restrict it
    return readFileSync(path, "utf8").trim();
  }
  const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(48))).toString("base64url");
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, secret, { mode: 0o600 });
  renameSync(tmp, path);
  return secret;
}
