// onnxruntime 1.30's Linux build sends usage telemetry to Microsoft (mobile.events.data.microsoft.com)
// and writes /tmp/mat-debug-<pid>.log and ~/.cache/Microsoft/DeveloperTools/.onnxruntime/ on every start,
// unless ORT_DISABLE_TELEMETRY is set in the process environment when it starts up. Quarry promises no
// network use and no files outside its data directory, so the variable is set before onnxruntime loads.
// Through libc's setenv: assigning process.env under Bun does not reach the environment native code reads.
import { FFIType } from "bun:ffi";
import { openLibc } from "../runtime/libc.ts";

let done = false;

/** Sets ORT_DISABLE_TELEMETRY=1 for the process, unless it is set already (a user's value is kept). */
export function disableOrtTelemetry(): void {
  if (done) return;
  done = true;
  const libc = openLibc({ setenv: { args: [FFIType.cstring, FFIType.cstring, FFIType.i32], returns: FFIType.i32 } });
  if (!libc) return;
  libc.symbols.setenv(Buffer.from("ORT_DISABLE_TELEMETRY\0"), Buffer.from("1\0"), 0);
  libc.close();
}
