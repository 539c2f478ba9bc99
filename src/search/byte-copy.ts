// Copying ranges of bytes out of long-lived typed arrays (a segment's mapped files, a segment's lengths)
// without making a view per copy. Every typed array made on an existing buffer (subarray(), new
// Uint8Array(buffer, offset, length)) stays recorded in that buffer's set of references until a full
// garbage collection, and searches made hundreds of them on the same few buffers. Measured at 1M chunks,
// vector searches of the 459 evaluation queries on one thread, pass after pass in one process: with a
// subarray per candidate code, the mean grew from 4.0 to 6.0 ms over five passes and single searches took
// up to 160 ms; without, 3.7 to 4.0 ms. Buffer.copy(target, at, from, to) copies natively between offsets
// instead (512 bytes from random places of 512 MB: 27 ns, where set() from a subarray took 110-235 ns).

const buffers = new WeakMap<ArrayBufferView, Buffer>();

/** A Buffer over the bytes of `view` (the same memory), made once per view: copy from it with Buffer.copy. */
export function bufferOf(view: ArrayBufferView): Buffer {
  let buffer = buffers.get(view);
  if (!buffer) buffers.set(view, (buffer = Buffer.from(view.buffer, view.byteOffset, view.byteLength)));
  return buffer;
}
