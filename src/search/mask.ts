// Eligibility masks (one byte per chunk rowid, 1 = may be returned) live in shared memory: a search
// hands its mask to every search thread, and a copy per thread per search (1 MB at a million chunks)
// left hundreds of MB of garbage in the threads' heaps under concurrent filtered searches.

export function newMask(length: number): Uint8Array {
  return new Uint8Array(new SharedArrayBuffer(length));
}

export function copyMask(mask: Uint8Array): Uint8Array {
  const copy = newMask(mask.length);
  copy.set(mask);
  return copy;
}
