// The one place that loads onnxruntime-node; all ONNX code gets it through loadOrt().
//
// Under `bun run` (and Node) this is a plain import. A `bun build --compile` binary embeds the N-API
// binding (onnxruntime_binding.node) by itself, but the binding needs libonnxruntime.so.1 beside it and a
// native library cannot be dlopen'ed from the embedded filesystem. So the single-binary bootstrap
// (src/runtime) writes the library to a real directory next to the data dir (not /tmp, which may be
// noexec) and sets its path here; it is dlopen'ed before onnxruntime-node is imported, so the binding's
// dependency resolves to the already-loaded library.
import { dlopen } from "bun:ffi";
import type * as OrtModule from "onnxruntime-node";

export type Ort = typeof OrtModule;

let loading: Promise<Ort> | undefined;
/** Set by the single-binary bootstrap in each JS context of a compiled binary. */
let libraryPath: string | undefined;
/** The dlopen handle; kept referenced so the library stays loaded for the life of the process. */
let preloaded: unknown;

/** Where the compiled binary unpacked libonnxruntime (see src/runtime). */
export function setOrtLibraryPath(path: string): void {
  libraryPath = path;
}

/** Loads onnxruntime-node once per JS context. */
export function loadOrt(): Promise<Ort> {
  loading ??= (async () => {
    if (Bun.isStandaloneExecutable) preloadLibrary();
    return (await import("onnxruntime-node")) as Ort;
  })().catch((error) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

function preloadLibrary(): void {
  if (!libraryPath) throw new Error("ONNX Runtime is not unpacked yet: the compiled binary must call prepareRuntime() (src/runtime) first");
  preloaded = dlopen(libraryPath, { OrtGetApiBase: { args: [], returns: "ptr" } });
}
