// Identifiers: a type prefix, 10 characters of millisecond time and 16 random characters, in Crockford
// base32. Ids sort by creation time, which keyset pagination relies on.

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

export type IdPrefix = "acc" | "kb" | "doc" | "chk" | "req" | "evt";

function encodeTime(ms: number): string {
  let out = "";
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

function randomPart(length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let out = "";
  for (const b of bytes) out += ALPHABET[b & 31];
  return out;
}

export function newId(prefix: IdPrefix, nowMs = Date.now()): string {
  return `${prefix}_${encodeTime(nowMs)}${randomPart(16)}`;
}

export function hasPrefix(id: string, prefix: IdPrefix): boolean {
  return id.startsWith(`${prefix}_`) && id.length > prefix.length + 1;
}
