// Issue 9 items 8 and 9: long non-ASCII file names, orphaned files swept at startup, private file modes,
// and a JWT secret of at least 32 bytes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { ingest, upload, workspace, type Workspace } from "../ingest/ingest-helpers.ts";
import { loadConfig } from "../../src/config.ts";

const dataDir = mkdtempSync(join(tmpdir(), "quarry-hardening-files-"));
let server: TestServer;
let ws: Workspace;
beforeAll(async () => {
  server = await startTestServer({ dataDir, env: { QUARRY_LIMITS: "off" } });
  ws = await workspace(server);
});
afterAll(async () => {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const mode = (path: string) => statSync(path).mode & 0o777;

/** Every file and folder under a folder (itself included), with its path. */
function walk(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return [path, ...readdirSync(path).flatMap((name) => walk(join(path, name)))];
}

const documentFolders = () => (existsSync(join(dataDir, "files", ws.kbId)) ? readdirSync(join(dataDir, "files", ws.kbId)).length : 0);

describe("file names over 255 bytes", () => {
  test("200 × é + .txt (404 bytes) is accepted, keeps its name, is stored under a name cut by bytes and becomes ready", async () => {
    const name = `${"é".repeat(200)}.txt`;
    const before = documentFolders();
    const doc = await ingest(server, ws, new File(["A note about long names.\n"], name));
    expect(doc.status).toBe("ready");
    expect(doc.name).toBe(name);
    const stored = basename(doc.storage_path);
    expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(200);
    expect(stored).toBe(`${"é".repeat(98)}.txt`); // 98 × 2 bytes + 4: no character split
    expect(existsSync(join(dataDir, doc.storage_path))).toBe(true);
    expect(documentFolders()).toBe(before + 1);
  });

  test("a name mixing 1-, 3- and 4-byte characters is cut on a character boundary, extension kept", async () => {
    const name = `${"a😀€".repeat(40)}.md`; // 320 bytes
    const res = await upload(server, ws, new File(["# Title\n\nbody\n"], name));
    expect(res.status).toBe(202);
    expect(res.body.data.name).toBe(name);
    const stored = basename(res.body.data.storage_path);
    expect(stored.endsWith(".md")).toBe(true);
    expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(200);
    expect(name.startsWith(stored.slice(0, -3))).toBe(true);
    expect(stored).not.toContain("\uFFFD");
  });
});

describe("private files and folders", () => {
  test("the database (-wal, -shm), the JWT secret and uploads are 0600, their folders 0700", async () => {
    await ingest(server, ws, new File(["private words\n"], "private.txt"));
    for (const file of ["quarry.db", "quarry.db-wal", "quarry.db-shm", "jwt-secret"]) expect([file, mode(join(dataDir, file))]).toEqual([file, 0o600]);
    expect(mode(dataDir)).toBe(0o700);
    const stored = walk(join(dataDir, "files"));
    expect(stored.length).toBeGreaterThan(4);
    for (const path of stored) expect([path, mode(path)]).toEqual([path, statSync(path).isDirectory() ? 0o700 : 0o600]);
  });
});

describe("startup", () => {
  test("removes files and folders without a document row, keeps the documents' files and makes everything private, after listening", async () => {
    const kept = await ingest(server, ws, new File(["kept after the restart\n"], "kept.txt"));
    const keptPath = join(dataDir, kept.storage_path);
    await server.stop();

    // What crashes leave behind: a whole upload without a row (crash before the commit), a half-written
    // temporary file, an older upload of a kept document (crash during a replacement), a deleted knowledge base.
    const orphans = [
      join(dataDir, "files", ws.kbId, "doc_orphan000000", "0badf00d", "never-committed.pdf"),
      `${keptPath}.4242.tmp`,
      join(dirname(dirname(keptPath)), "00000000", "kept-v0.txt"),
      join(dataDir, "files", "kb_deleted00000", "doc_gone00000000", "11111111", "gone.txt"),
    ];
    for (const path of orphans) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, "orphan");
    }
    // files from a version that did not restrict modes
    for (const path of walk(join(dataDir, "files"))) chmodSync(path, statSync(path).isDirectory() ? 0o755 : 0o644);
    for (const file of ["quarry.db", "jwt-secret"]) chmodSync(join(dataDir, file), 0o644);
    chmodSync(dataDir, 0o755);
    // Left before the start, as a crash leaves them (the sweep leaves alone what the server itself writes).
    const before = new Date(Date.now() - 60_000);
    for (const path of walk(join(dataDir, "files"))) utimesSync(path, before, before);
    // Copied in just before the start (cp -r of a backup): left in place as the server's own, but made private too;
    // so are the search indexes and the lock file.
    const copied = join(dataDir, "files", "kb_copied000000", "doc_copied000000", "44444444", "copied.txt");
    mkdirSync(dirname(copied), { recursive: true });
    writeFileSync(copied, "copied");
    const index = join(dataDir, "indexes", "kb_copied", "12");
    mkdirSync(index, { recursive: true });
    writeFileSync(join(index, "segment.bin"), "x");
    // (the modes set, not asked of mkdir and writeFile: the umask here is the server's 077)
    for (const path of [...walk(join(dataDir, "files", "kb_copied000000")), ...walk(join(dataDir, "indexes"))]) chmodSync(path, statSync(path).isDirectory() ? 0o755 : 0o644);
    chmodSync(join(dataDir, "quarry.lock"), 0o644);

    server = await startTestServer({ dataDir, env: { QUARRY_LIMITS: "off" } });
    // The sweep runs on its own thread once the server listens: requests are answered meanwhile.
    expect((await server.request("GET", `${ws.docs}?limit=1`, { token: ws.account.apiKey })).status).toBe(200);
    expect((await server.server.filesSwept)?.removedFiles).toBe(orphans.length);
    for (const path of orphans) expect([path, existsSync(path)]).toEqual([path, false]);
    expect(existsSync(join(dataDir, "files", ws.kbId, "doc_orphan000000"))).toBe(false);
    expect(existsSync(join(dataDir, "files", "kb_deleted00000"))).toBe(false);
    expect(existsSync(keptPath)).toBe(true);
    expect(existsSync(copied)).toBe(true);
    const indexes = walk(join(dataDir, "indexes"));
    expect(indexes.length).toBeGreaterThan(0);
    for (const path of [...walk(join(dataDir, "files")), join(dataDir, "indexes"), ...indexes]) expect([path, mode(path)]).toEqual([path, statSync(path).isDirectory() ? 0o700 : 0o600]);
    for (const file of ["quarry.db", "jwt-secret", "quarry.lock"]) expect([file, mode(join(dataDir, file))]).toEqual([file, 0o600]);
    expect(mode(dataDir)).toBe(0o700);
    rmSync(join(dataDir, "files", "kb_copied000000"), { recursive: true }); // the next start would sweep it

    // every document still has its file: a replacement of the kept one is processed from it
    const documents = await server.request("GET", `${ws.docs}?limit=100`, { token: ws.account.apiKey });
    expect(documents.status).toBe(200);
    for (const doc of documents.body.data) expect([doc.name, existsSync(join(dataDir, doc.storage_path))]).toEqual([doc.name, true]);
  });
});

describe("startup sweep and uploads", () => {
  test("a file written since the start (an upload not yet committed) is left alone; one from before is removed", async () => {
    await server.stop();
    const old = join(dataDir, "files", ws.kbId, "doc_crashed000000", "22222222", "old.txt");
    const fresh = join(dataDir, "files", ws.kbId, "doc_inflight00000", "33333333", "fresh.txt");
    for (const path of [old, fresh]) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, "no row");
    }
    const before = new Date(Date.now() - 60_000);
    for (const path of walk(join(dataDir, "files"))) if (!path.includes("doc_inflight")) utimesSync(path, before, before);

    server = await startTestServer({ dataDir, env: { QUARRY_LIMITS: "off" } });
    expect((await server.server.filesSwept)?.removedFiles).toBe(1);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(fresh)).toBe(true);
  });
});

describe("JWT secret", () => {
  test("a 10-byte QUARRY_JWT_SECRET refuses to start with a clear message and a non-zero exit code", async () => {
    const dir = mkdtempSync(join(tmpdir(), "quarry-short-secret-"));
    try {
      const proc = Bun.spawn(["node_modules/.bin/bun", "src/main.ts", "serve", "--port", "0", "--data-dir", dir], {
        stdout: "pipe",
        stderr: "pipe",
        env: { ...process.env, QUARRY_JWT_SECRET: "0123456789" },
      });
      const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
      expect(code).not.toBe(0);
      expect(stderr).toContain("Configuration error: QUARRY_JWT_SECRET must be at least 32 bytes, got 10");
      expect(existsSync(join(dir, "quarry.db"))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a kept jwt-secret file cut short, emptied or not a file refuses to start, naming the file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "quarry-kept-secret-"));
    const secretPath = join(dir, "jwt-secret");
    const serve = async () => {
      const proc = Bun.spawn(["node_modules/.bin/bun", "src/main.ts", "serve", "--port", "0", "--data-dir", dir], { stdout: "pipe", stderr: "pipe" });
      const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
      return { stderr, code };
    };
    try {
      for (const [content, bytes] of [["short", 5], ["", 0], [" ".repeat(40), 0]] as const) {
        writeFileSync(secretPath, content);
        const { stderr, code } = await serve();
        expect(code).not.toBe(0);
        expect(stderr).toContain(`Configuration error: the JWT secret kept in ${secretPath} is ${bytes} bytes, under the 32 required`);
      }
      rmSync(secretPath);
      mkdirSync(secretPath);
      const asFolder = await serve();
      expect(asFolder.code).not.toBe(0);
      expect(asFolder.stderr).toContain(`Configuration error: cannot read the JWT secret kept in ${secretPath}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("32 bytes (counted in UTF-8) is enough", () => {
    expect(loadConfig({ QUARRY_JWT_SECRET: "s".repeat(32) }).jwtSecret).toBe("s".repeat(32));
    expect(() => loadConfig({ QUARRY_JWT_SECRET: "é".repeat(15) })).toThrow(/at least 32 bytes, got 30/);
    expect(loadConfig({}).jwtSecret).toBeNull();
  });
});
