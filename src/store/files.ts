// Uploaded originals on disk under <data>/files/<kb_id>/<doc_id>/<upload>/<safe name>. storage_path in the
// database is relative to the data dir so the data dir can move as a whole. Files are 0600 and folders
// 0700 (only Quarry's user reads uploads). A file is written and flushed before its row is committed, and
// removed after its row is deleted; a crash in between leaves a file without a row, which the startup sweep
// (file-sweep.ts) removes.
import { mkdirSync, rmSync, rmdirSync, renameSync, readFileSync, chmodSync } from "node:fs";
import { open } from "node:fs/promises";
import { dirname, join, relative } from "node:path";

/**
 * Stored names are cut to this many UTF-8 bytes, leaving room under the usual 255-byte file name limit for
 * the temporary suffix used while writing (".<pid>.tmp").
 */
export const MAX_STORED_NAME_BYTES = 200;
/** The extension kept when a name is cut, if it is at most this long. */
const MAX_KEPT_EXTENSION_BYTES = 16;

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/** The longest prefix of `text` of at most `maxBytes` UTF-8 bytes, never splitting a character. */
export function cutToBytes(text: string, maxBytes: number): string {
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    bytes += Buffer.byteLength(char);
    if (bytes > maxBytes) break;
    end += char.length;
  }
  return text.slice(0, end);
}

/**
 * A file name safe on every filesystem: no directories (a slash becomes an underscore: raw text may be named
 * "Q3/Q4 summary"; an upload's name is already its last path segment), control characters or leading dots,
 * at most 200 bytes.
 */
export function sanitizeFileName(name: string): string {
  const cleaned = name
    .replace(/[\\/]/g, "_")
    .normalize("NFC")
    .replace(/[\u0000-\u001f\u007f<>:"|?*]/g, "")
    .trim()
    // No hidden files; a name that is only an extension (".txt") keeps it.
    .replace(/^\.+/, "file.");
  if (Buffer.byteLength(cleaned) <= MAX_STORED_NAME_BYTES) return cleaned || "file";
  const extension = /\.[^.]+$/.exec(cleaned)?.[0] ?? "";
  const kept = Buffer.byteLength(extension) <= MAX_KEPT_EXTENSION_BYTES ? extension : "";
  const stem = cutToBytes(cleaned.slice(0, cleaned.length - kept.length), MAX_STORED_NAME_BYTES - Buffer.byteLength(kept)).trimEnd();
  return (stem || "file") + kept;
}

/** Flushes a file or folder to disk, so a committed row never points at a file lost in a power cut. */
async function flush(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export class FileStore {
  constructor(private readonly dataDir: string) {}

  /** Writes the file atomically and durably and returns its storage_path (relative to the data dir). */
  async save(kbId: string, docId: string, fileName: string, data: Uint8Array | Blob): Promise<string> {
    const path = join(this.dataDir, "files", kbId, docId, sanitizeFileName(fileName));
    const folder = dirname(path);
    mkdirSync(folder, { recursive: true, mode: PRIVATE_DIR_MODE });
    const tmp = `${path}.${process.pid}.tmp`;
    try {
      await Bun.write(tmp, data);
      chmodSync(tmp, PRIVATE_FILE_MODE);
      await flush(tmp);
      renameSync(tmp, path);
      await flush(folder);
    } catch (error) {
      rmSync(folder, { recursive: true, force: true });
      removeIfEmpty(dirname(folder));
      throw error;
    }
    return relative(this.dataDir, path);
  }

  absolute(storagePath: string): string {
    return join(this.dataDir, storagePath);
  }

  read(storagePath: string): Uint8Array {
    return readFileSync(this.absolute(storagePath));
  }

  /** Removes every stored version of a document. */
  removeDocument(kbId: string, docId: string): void {
    rmSync(join(this.dataDir, "files", kbId, docId), { recursive: true, force: true });
  }

  removeKnowledgeBase(kbId: string): void {
    rmSync(join(this.dataDir, "files", kbId), { recursive: true, force: true });
  }
}

/** Removes a folder left empty (a document folder whose only upload failed); keeps it otherwise. */
function removeIfEmpty(folder: string): void {
  try {
    rmdirSync(folder);
  } catch {
    // not empty (the document's current file), or already gone
  }
}
