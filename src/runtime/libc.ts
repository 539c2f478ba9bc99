// The C library through bun:ffi, for the few calls Bun does not expose: a setenv that native code sees
// (models/ort-telemetry.ts) and madvise (search/page-advice.ts).
import { dlopen, type FFIFunction, type Library } from "bun:ffi";

const LIBC_NAMES: Partial<Record<NodeJS.Platform, string[]>> = {
  linux: ["libc.so.6", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1"],
  darwin: ["libSystem.B.dylib"],
};

/** The C library with the given functions bound, or null where none of its known names loads. */
export function openLibc<Fns extends Record<string, FFIFunction>>(functions: Fns): Library<Fns> | null {
  for (const name of LIBC_NAMES[process.platform] ?? []) {
    try {
      return dlopen(name, functions);
    } catch {
      // not this C library's name: try the next
    }
  }
  return null;
}
