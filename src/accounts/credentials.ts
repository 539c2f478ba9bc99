// API keys and passwords. A key is "qk_" + 32 random bytes (base64url); only its SHA-256 is stored,
// which is safe for high-entropy secrets and lets authentication look it up by index.

export function generateApiKey(): string {
  return `qk_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url")}`;
}

export function hashApiKey(key: string): string {
  return new Bun.CryptoHasher("sha256").update(key).digest("hex");
}

export function looksLikeApiKey(token: string): boolean {
  return token.startsWith("qk_");
}

// OWASP's argon2id baseline (19 MiB, 2 passes): strong against offline guessing, ~10x cheaper per
// signup/login than Bun's 64 MiB default on a 2-core box.
export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: "argon2id", memoryCost: 19456, timeCost: 2 });
}

export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return Bun.password.verify(password, hash);
}
