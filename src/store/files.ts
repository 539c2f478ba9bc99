// Uploaded originals on disk under <data>/files/<kb_id>/<doc_id>/<safe name>. storage_path in the
// database is relative to the data dir so the data dir can move as a whole.
import { mkdirSync, rmSync, renameSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

/** A file name safe on every filesystem: no directories, control characters or leading dots. */
export function sanitizeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? "";
  const cleaned = base
    .normalize("NFC")
    .replace(/[\u0000-\u001f\u007f<>:"|?*]/g, "")
    .replace(/^[.\s]+/, "")
    .trim()
    .slice(0, 200);
  return cleaned || "file";
}

export class FileStore {
  constructor(private readonly dataDir: string) {}

  /** Writes the file atomically and returns its storage_path (relative to the data dir). */
  async save(kbId: string, docId: string, fileName: string, data: Uint8Array | Blob): Promise<string> {
    const path = join(this.dataDir, "files", kbId, docId, sanitizeFileName(fileName));
    mkdirSync(dirname(path), { recursive: true });
    const tmp = `${path}.${process.pid}.tmp`;
    await Bun.write(tmp, data);
    renameSync(tmp, path);
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
