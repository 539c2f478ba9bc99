// Lengths in characters, as the spec's limits and zod's max() count them: Unicode code points, so that
// an emoji is one character, not the two UTF-16 code units JavaScript's `length` counts.

/** The number of code points in `text`. */
export function characterCount(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    // A high surrogate followed by a low one is one character (a lone surrogate counts as one).
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        i++;
      }
    }
  }
  return count;
}
