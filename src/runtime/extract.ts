// Unpacks the files embedded under EMBEDDED_DIR into <data dir>/.runtime/<build id>/, once per build:
// they are written to a private folder that is then renamed into place, so a folder under its final
// name is always complete, and processes starting at the same time cannot see half-written files.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { BUILD_INFO_FILE, COMPRESSED_SUFFIX, EMBEDDED_DIR } from "./layout.ts";

/** Folder names under .runtime that are unpackings in progress (or abandoned by a crash). */
const PARTIAL_MARK = ".partial-";
/** An unpacking folder older than this was abandoned; younger ones may belong to a process starting now. */
const ABANDONED_AFTER_MS = 10 * 60 * 1000;

/** The embedded runtime files by their path under EMBEDDED_DIR. */
function embeddedRuntimeFiles(): Map<string, Blob> {
  const prefix = `${EMBEDDED_DIR}/`;
  const files = new Map<string, Blob>();
  for (const file of Bun.embeddedFiles as ReadonlyArray<Blob & { name: string }>) {
    if (file.name.startsWith(prefix)) files.set(file.name.slice(prefix.length), file);
  }
  return files;
}

/** Returns the folder holding the unpacked files of this build. */
export async function extractEmbeddedRuntime(dataDir: string): Promise<string> {
  const files = embeddedRuntimeFiles();
  const buildInfo = files.get(BUILD_INFO_FILE);
  if (!buildInfo) throw new Error(`This executable was built without its runtime files (${EMBEDDED_DIR}/${BUILD_INFO_FILE}); rebuild it with npm run build`);
  const { id } = (await buildInfo.json()) as { id: string };
  const root = join(dataDir, ".runtime");
  const target = join(root, id);
  if (existsSync(target)) return target;

  mkdirSync(root, { recursive: true, mode: 0o700 }); // like the data dir's other folders
  const partial = mkdtempSync(join(root, `${id}${PARTIAL_MARK}`));
  try {
    for (const [path, blob] of files) {
      const compressed = path.endsWith(COMPRESSED_SUFFIX);
      const destination = join(partial, compressed ? path.slice(0, -COMPRESSED_SUFFIX.length) : path);
      // Private like the rest of the data dir, whatever the umask: the server loads these libraries.
      mkdirSync(dirname(destination), { recursive: true, mode: 0o700 });
      await Bun.write(destination, compressed ? Bun.zstdDecompressSync(await blob.bytes()) : blob);
      chmodSync(destination, 0o600);
    }
    renameSync(partial, target);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    // Another process unpacked the same build first: use its copy.
    if (!existsSync(target)) throw error;
  }
  return target;
}

/**
 * Frees the space of other builds' files and of unpackings abandoned by a crash. Only for a process that
 * holds the data dir (serve, reindex): another build's server may be running on it, and a command run
 * beside it (accounts, backup, a refused second serve) took its libraries away mid-run.
 */
export async function removeOtherBuilds(dataDir: string): Promise<void> {
  const buildInfo = embeddedRuntimeFiles().get(BUILD_INFO_FILE);
  const root = join(dataDir, ".runtime");
  if (!buildInfo || !existsSync(root)) return;
  const { id: currentId } = (await buildInfo.json()) as { id: string };
  for (const name of readdirSync(root)) {
    if (name === currentId) continue;
    const path = join(root, name);
    try {
      if (name.includes(PARTIAL_MARK) && Date.now() - statSync(path).mtimeMs < ABANDONED_AFTER_MS) continue;
      rmSync(path, { recursive: true, force: true });
    } catch {
      // Best effort: a folder that cannot be removed now is tried again at the next new build.
    }
  }
}
