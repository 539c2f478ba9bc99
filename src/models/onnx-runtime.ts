// The one place that loads onnxruntime-node; all ONNX code gets it through loadOrt().
//
// Under `bun run` (and Node) this is a plain import. In a compiled binary the N-API binding is loaded
// from the directory where src/runtime unpacks it next to libonnxruntime, which the binding finds
// through its $ORIGIN run path (native libraries cannot be loaded from Bun's embedded filesystem).
import type * as OrtModule from "onnxruntime-node";
import { disableOrtTelemetry } from "./ort-telemetry.ts";

export type Ort = typeof OrtModule;

let loading: Promise<Ort> | undefined;

/** Loads onnxruntime-node once per JS context. */
export function loadOrt(): Promise<Ort> {
  disableOrtTelemetry();
  loading ??= (import("onnxruntime-node") as Promise<Ort>).catch((error) => {
    loading = undefined;
    throw error;
  });
  return loading;
}
