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

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: "argon2id" });
}

export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return Bun.password.verify(password, hash);
}
