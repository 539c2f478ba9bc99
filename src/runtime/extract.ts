// Unpacks the files embedded under EMBEDDED_DIR into <data dir>/.runtime/<build id>/, once per build:
// they are written to a private folder that is then renamed into place, so a folder under its final
// name is always complete, and processes starting at the same time cannot see half-written files.
// A folder that has since lost a file, or holds one this user cannot read (unpacked by a command run as
// another user), is unpacked again and swapped in.
import { accessSync, chmodSync, constants, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { BUILD_INFO_FILE, COMPRESSED_SUFFIX, EMBEDDED_DIR } from "./layout.ts";

/** Folder names under .runtime that are unpackings in progress (or abandoned by a crash). */
const PARTIAL_MARK = ".partial-";
/** An unpacking folder older than this was abandoned; younger ones may belong to a process starting now. */
const ABANDONED_AFTER_MS = 10 * 60 * 1000;
/** In an unpacked folder: JSON of each file's path (relative to the folder) and size, to check it by. */
const CONTENTS_FILE = ".contents.json";

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
  const unpacked = existsSync(target);
  const fault = unpacked ? unusable(target) : null;
  if (unpacked && fault === null) return target;

  const partial = await unpackInto(root, id, files);
  try {
    if (fault !== null) moveAside(target, fault);
    renameSync(partial, target);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    // Another process unpacked the same build first: use its copy.
    if (!existsSync(target) || unusable(target) !== null) throw error;
  }
  return target;
}

/** Why the unpacked folder cannot be used (a file missing, changed in size or unreadable), or null. */
function unusable(folder: string): string | null {
  let contents: Record<string, number>;
  try {
    contents = JSON.parse(readFileSync(join(folder, CONTENTS_FILE), "utf8")) as Record<string, number>;
  } catch (error) {
    // Also where an executable from before the list was kept (same runtime files, same id) unpacked it:
    // unpacked again once, so that the folder can be checked from then on.
    return `${CONTENTS_FILE}: ${errorCode(error)}`;
  }
  for (const [path, size] of Object.entries(contents)) {
    const file = join(folder, path);
    try {
      accessSync(file, constants.R_OK);
      if (statSync(file).size !== size) return `${path} has changed`;
    } catch (error) {
      return `${path}: ${errorCode(error)}`;
    }
  }
  return null;
}

/**
 * Renames an unusable folder out of the way. Not removed: a server of this build may be running from it.
 * Named as an abandoned unpacking, so that a serve or reindex removes it once it is old (removeOtherBuilds).
 */
function moveAside(target: string, fault: string): void {
  try {
    renameSync(target, `${target}${PARTIAL_MARK}unusable-${Date.now()}`);
  } catch (error) {
    throw new Error(
      `The unpacked runtime folder ${target} cannot be used (${fault}) and cannot be replaced (${errorCode(error)}): ` +
        `remove it (Quarry unpacks it again at its next start), or run Quarry as the user that owns the data dir`,
    );
  }
}

/** Writes the files into a new private folder under `root` and returns it. */
async function unpackInto(root: string, id: string, files: Map<string, Blob>): Promise<string> {
  mkdirSync(root, { recursive: true, mode: 0o700 }); // like the data dir's other folders
  const partial = mkdtempSync(join(root, `${id}${PARTIAL_MARK}`));
  try {
    const contents: Record<string, number> = {};
    for (const [path, blob] of files) {
      const name = path.endsWith(COMPRESSED_SUFFIX) ? path.slice(0, -COMPRESSED_SUFFIX.length) : path;
      const destination = join(partial, name);
      // Private like the rest of the data dir, whatever the umask: the server loads these libraries.
      mkdirSync(dirname(destination), { recursive: true, mode: 0o700 });
      contents[name] = await Bun.write(destination, name === path ? blob : Bun.zstdDecompressSync(await blob.bytes()));
      chmodSync(destination, 0o600);
    }
    writeFileSync(join(partial, CONTENTS_FILE), JSON.stringify(contents), { mode: 0o600 });
    return partial;
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    throw error;
  }
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
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
