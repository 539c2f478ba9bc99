// Identifiers: a type prefix, 10 characters of millisecond time and 16 random characters, in Crockford
// base32 (like ULIDs). Ids sort by creation time, which keyset pagination relies on: within one
// millisecond the random part is incremented instead of redrawn, so ids made later always sort later.

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

const RANDOM_LENGTH = 16;

function randomDigits(): number[] {
  return Array.from(crypto.getRandomValues(new Uint8Array(RANDOM_LENGTH)), (b) => b & 31);
}

/** Adds one to a base32 number (most significant digit first); false when it overflows. */
function increment(digits: number[]): boolean {
  for (let i = digits.length - 1; i >= 0; i--) {
    if (digits[i] < 31) {
      digits[i]++;
      return true;
    }
    digits[i] = 0;
  }
  return false;
}

let lastTime = -1;
let lastRandom: number[] = [];

export function newId(prefix: IdPrefix, nowMs = Date.now()): string {
  let time = Math.max(nowMs, lastTime);
  if (time === lastTime) {
    if (!increment(lastRandom)) {
      time += 1;
      lastRandom = randomDigits();
    }
  } else {
    lastRandom = randomDigits();
  }
  lastTime = time;
  return `${prefix}_${encodeTime(time)}${lastRandom.map((d) => ALPHABET[d]).join("")}`;
}

export function hasPrefix(id: string, prefix: IdPrefix): boolean {
  return id.startsWith(`${prefix}_`) && id.length > prefix.length + 1;
}
