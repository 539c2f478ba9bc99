// Bun's memory allocator (its build of mimalloc) gives memory back to the OS in the background, down
// to the free blocks inside pages still in use ("purge holes"), and maps it in again at the next
// allocation. For a server answering searches that is tens of page faults and madvise calls per request,
// on all its threads. At 1M chunks on 2 cores, six paired runs with hole purging off against the default:
// CPU per search fell in every cell (vector, one client: 9.3-13.7 instead of 13.5-17.5 ms; its p95
// 13.4-20.3 instead of 21.0-29.4 ms), page faults per hybrid search 1-96 instead of 69-110. Whole free
// pages still go back to the OS (resident after bench:scale 946 instead of 898 MB); a longer purge delay
// kept most of the cost, and no purging at all kept 140-190 MB more.
// mimalloc reads its options from the environment once, as the process starts, so the server restarts its
// own process image with hole purging off (execve: same pid, arguments and open files; ~30 ms).
import { FFIType, ptr } from "bun:ffi";
import { openLibc } from "./libc.ts";

/** Bun's mimalloc option: whether free blocks inside pages still in use are purged. An operator's value is left as it is. */
export const PURGE_HOLES_VARIABLE = "MIMALLOC_PURGE_HOLES";

/**
 * Replaces this process with the same command run with hole purging off, unless the environment
 * already sets it. Returns only when it did not restart (already set, or exec unavailable).
 */
export function restartWithoutPurgingHoles(): void {
  if (process.env[PURGE_HOLES_VARIABLE] !== undefined) return;
  const libc = openLibc({ execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 } });
  if (!libc) return;
  // A compiled binary runs its embedded entry point; from source, Bun needs its flags and the script again.
  const args = Bun.isStandaloneExecutable ? process.argv.slice(2) : [...process.execArgv, process.argv[1], ...process.argv.slice(2)];
  const env = { ...process.env, [PURGE_HOLES_VARIABLE]: "0" };
  const strings: Buffer[] = [];
  const cString = (value: string) => {
    const bytes = Buffer.from(`${value}\0`);
    strings.push(bytes); // kept referenced until execve has read it
    return bytes;
  };
  const nullTerminated = (values: string[]) => {
    const pointers = new BigUint64Array(values.length + 1);
    values.forEach((value, i) => (pointers[i] = BigInt(ptr(cString(value)))));
    return pointers;
  };
  const argv = nullTerminated([process.execPath, ...args]);
  const envp = nullTerminated(Object.entries(env).map(([name, value]) => `${name}=${value}`));
  // On success execve does not return; on failure the server simply runs with the allocator's defaults.
  libc.symbols.execve(ptr(cString(process.execPath)), ptr(argv), ptr(envp));
  libc.close();
}

/**
 * The environment for a parser child process: the allocator's defaults, whatever the server runs with.
 * Its memory limit watches its resident set, which should fall back after a large document.
 */
export function parserEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const child = { ...env };
  delete child[PURGE_HOLES_VARIABLE];
  return child;
}
