// The size a JSON value takes once serialized, measured without serializing it: iterative (so a deeply
// nested value cannot overflow the stack) and stopping as soon as the size passes a bound (so a huge value
// costs no more than the bound to reject).

/**
 * The UTF-8 byte length of JSON.stringify(value) for a value that came from JSON.parse; once that passes
 * `bound`, some number above `bound` instead.
 */
export function jsonByteSize(value: unknown, bound: number): number {
  let size = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0 && size <= bound) {
    const item = pending.pop();
    if (Array.isArray(item)) {
      size += 2 + Math.max(0, item.length - 1); // brackets and commas
      if (size <= bound) for (const child of item) pending.push(child);
    } else if (item !== null && typeof item === "object") {
      size += 2; // the braces; each key after the first adds a comma
      let first = true;
      for (const key in item) {
        if (size > bound) break;
        if (!Object.hasOwn(item, key)) continue;
        size += Buffer.byteLength(JSON.stringify(key)) + (first ? 1 : 2); // the key, its colon and a comma
        first = false;
        pending.push((item as Record<string, unknown>)[key]);
      }
    } else {
      size += Buffer.byteLength(JSON.stringify(item) ?? "null");
    }
  }
  return size;
}
