// Starting and stopping the real server: a busy port or data directory is an error, and a graceful stop
// lets in-flight requests finish, refuses new ones and checkpoints the WAL. `quarry serve` loads its models
// while it imports the server and opens the database: either failing ends it with the cause and exit code 1.
import { describe, expect, test } from "bun:test";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { openDatabase } from "../../src/store/db.ts";
import { startServer } from "../../src/server.ts";
import { reindex } from "../../src/cli/reindex.ts";
import { serverAt, signup, startTestServer, waitForDocument } from "../helpers/server.ts";
import { childrenOf, environmentOf } from "../helpers/processes.ts";
import { ingest, workspace } from "../ingest/ingest-helpers.ts";

/** `bun src/main.ts serve` on `dataDir` and a free port, its output piped; `launcher` runs it (["nohup"]). */
function spawnServe(dataDir: string, env: Record<string, string | undefined> = process.env, launcher: string[] = []) {
  return Bun.spawn([...launcher, "node_modules/.bin/bun", "src/main.ts", "serve", "--port", "0", "--data-dir", dataDir], { stdout: "pipe", stderr: "pipe", env });
}

describe("server lifecycle", () => {
  test("a second server on a port already in use fails to start instead of sharing it", async () => {
    const first = await startTestServer();
    try {
      const config = loadConfig({ PORT: String(first.server.port), QUARRY_HOST: "127.0.0.1", QUARRY_DATA_DIR: join(first.dataDir, "second"), QUARRY_WORKERS: "1" });
      await expect(startServer(config)).rejects.toThrow(/cannot listen on 127\.0\.0\.1:\d+/);
      // the first server still answers every request alone
      for (let i = 0; i < 5; i++) expect((await first.request("GET", "/health")).status).toBe(200);
    } finally {
      await first.stop();
    }
  });

  test("a second server or a reindex on a data directory in use is refused, naming the server; after its stop the directory is free", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "quarry-data-dir-lock-"));
    try {
      const first = await startTestServer({ dataDir });
      try {
        const proc = spawnServe(dataDir);
        const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
        expect(code).toBe(1);
        expect(stderr).toContain(`quarry: another Quarry server (pid ${process.pid}) is using the data directory ${dataDir}`);
        await expect(reindex(loadConfig({ QUARRY_DATA_DIR: dataDir }), () => {})).rejects.toThrow(/another Quarry server .* is using the data directory/);
        // the first server still answers every request alone
        for (let i = 0; i < 5; i++) expect((await first.request("GET", "/health")).status).toBe(200);
      } finally {
        await first.stop();
      }
      const next = await startTestServer({ dataDir });
      expect((await next.request("GET", "/health")).status).toBe(200);
      await next.stop();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("a data directory whose database is missing or empty, but which holds stored files, is refused and its files kept", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "quarry-lost-database-"));
    try {
      const first = await startTestServer({ dataDir, env: { QUARRY_LIMITS: "off" } });
      const account = await signup(first);
      const kb = (await first.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "kept" } })).body.data.id;
      const doc = await first.request("POST", `/v1/knowledge-bases/${kb}/documents`, { token: account.apiKey, form: { file: new File(["Hives need water."], "hives.txt") } });
      await waitForDocument(first, account.apiKey, kb, doc.body.data.id);
      await first.stop();
      const storedFiles = () => readdirSync(join(dataDir, "files"), { recursive: true }).length;
      const stored = storedFiles();
      expect(stored).toBeGreaterThan(0);
      for (const lose of [() => rmSync(join(dataDir, "quarry.db")), () => writeFileSync(join(dataDir, "quarry.db"), "")]) {
        lose();
        const proc = spawnServe(dataDir);
        const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
        expect(code).toBe(1);
        expect(stderr).toContain(`quarry: the data directory ${dataDir} holds files/`);
        expect(stderr).toContain("Restore the database from a backup");
        await expect(reindex(loadConfig({ QUARRY_DATA_DIR: dataDir }), () => {})).rejects.toThrow(/holds files\/.* but its database/);
        expect(storedFiles()).toBe(stored);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("stop() lets an in-flight request finish, then refuses new ones and checkpoints the WAL", async () => {
    const server = await startTestServer({ env: { QUARRY_LIMITS: "off" } });
    const account = await signup(server);
    // A request whose body is still arriving when the stop begins.
    let send!: (chunk: string) => void;
    let finish!: () => void;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        send = (chunk) => controller.enqueue(new TextEncoder().encode(chunk));
        finish = () => controller.close();
      },
    });
    const inFlight = fetch(`${server.url}/v1/knowledge-bases`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.apiKey}`, "content-type": "application/json" },
      body,
    });
    send('{"name":');
    await Bun.sleep(100);
    const stopped = server.server.stop();
    await Bun.sleep(50);
    send('"finished during shutdown"}');
    finish();
    const res = await inFlight;
    expect(res.status).toBe(201);
    expect((await res.json()).data.name).toBe("finished during shutdown");
    await stopped;
    await expect(fetch(`${server.url}/health`)).rejects.toThrow();
    expect(statSync(join(server.dataDir, "quarry.db-wal"), { throwIfNoEntry: false })?.size ?? 0).toBe(0);
    await server.stop();
  });

  test("a request still in flight when the grace period ends is cut off, saying so, and the stop completes", async () => {
    const logged: string[] = [];
    const server = await startTestServer({ env: { QUARRY_LIMITS: "off" }, stopGraceMs: 300, log: (line) => logged.push(line) });
    const account = await signup(server);
    // An upload that stalls and never ends.
    let send!: (chunk: string) => void;
    const body = new ReadableStream<Uint8Array>({ start: (controller) => void (send = (chunk) => controller.enqueue(new TextEncoder().encode(chunk))) });
    const inFlight = fetch(`${server.url}/v1/knowledge-bases`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.apiKey}`, "content-type": "application/json" },
      body,
    }).catch((error: Error) => error);
    send('{"name":');
    await Bun.sleep(100);
    // Well past the 300 ms grace, and short of the idle timeout that ended such a connection before.
    const outcome = await Promise.race([server.server.stop(), Bun.sleep(5_000).then(() => "still stopping")]);
    expect(outcome).toBe(1); // the requests cut off
    expect(logged.at(-1)).toBe("stopping: 1 request still in flight after 0.3 s cut off");
    expect(await inFlight).toBeInstanceOf(Error);
    expect(statSync(join(server.dataDir, "quarry.db-wal"), { throwIfNoEntry: false })?.size ?? 0).toBe(0);
    await server.stop();
  });

  /** Runs `quarry serve` on a fresh data dir prepared by `prepare`; resolves with its exit code and stderr. */
  async function serveFails(env: Record<string, string>, prepare: (dataDir: string) => void = () => {}) {
    const dataDir = mkdtempSync(join(tmpdir(), "quarry-start-fails-"));
    try {
      prepare(dataDir);
      const proc = spawnServe(dataDir, { ...process.env, ...env });
      const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
      return { code, stderr };
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }

  test("quarry serve with a model that is not installed says so and exits 1", async () => {
    const { code, stderr } = await serveFails({ QUARRY_EMBED_MODEL: "not-installed" });
    expect(code).toBe(1);
    expect(stderr).toContain('quarry: Embedding model "not-installed" not found');
  });

  test("quarry serve on a file that is not a database says so and exits 1, while its models were loading", async () => {
    let path = "";
    const { code, stderr } = await serveFails({}, (dataDir) => writeFileSync((path = join(dataDir, "quarry.db")), "not a database, but long enough to be read as one".repeat(100)));
    expect(code).toBe(1);
    expect(stderr).toContain(`quarry: file is not a database: ${path}`);
  });

  test("quarry serve with a folder where the database file goes names it and exits 1", async () => {
    let path = "";
    const { code, stderr } = await serveFails({}, (dataDir) => mkdirSync((path = join(dataDir, "quarry.db"))));
    expect(code).toBe(1);
    expect(stderr).toContain(`quarry: unable to open database file: ${path}`);
  });
});

describe("the quarry serve process", () => {
  /** Starts `bun src/main.ts serve` on a fresh data dir; resolves once it listens. */
  async function serve(env: Record<string, string> = {}, launcher: string[] = []) {
    const dataDir = mkdtempSync(join(tmpdir(), "quarry-serve-process-"));
    const inherited = { ...process.env };
    delete inherited.MIMALLOC_PURGE_HOLES;
    const proc = spawnServe(dataDir, { ...inherited, QUARRY_WORKERS: "1", QUARRY_LIMITS: "off", ...env }, launcher);
    const reader = proc.stdout.getReader();
    let banner = "";
    let listening: RegExpExecArray | null = null;
    while (!listening) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`quarry serve exited before listening: ${banner}${await new Response(proc.stderr).text()}`);
      banner += new TextDecoder().decode(value);
      listening = /listening on (http:\/\/\S+?\/api)/.exec(banner);
    }
    // Both drained, so that a full pipe never blocks the server (its log has a line per document).
    void new Response(proc.stderr).text();
    let output = banner;
    void (async () => {
      for (let read = await reader.read(); !read.done; read = await reader.read()) output += new TextDecoder().decode(read.value);
    })();
    return {
      pid: proc.pid,
      api: serverAt(listening[1]),
      url: listening[1],
      output: () => output,
      exited: proc.exited,
      async stop() {
        proc.kill("SIGTERM");
        await proc.exited;
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }

  test("SIGHUP (its terminal closed) stops it gracefully, as SIGTERM does, unless started with nohup; a second signal ends it at once, saying so", async () => {
    const hungUp = await serve();
    process.kill(hungUp.pid, "SIGHUP");
    expect(await hungUp.exited).toBe(0);
    expect(hungUp.output()).toContain("SIGHUP received: finishing in-flight work…\nStopped cleanly.\n");
    await hungUp.stop();
    const twice = await serve();
    // Sent together: the second arrives while the first stop is still closing the workers and the database.
    process.kill(twice.pid, "SIGTERM");
    process.kill(twice.pid, "SIGINT");
    expect(await twice.exited).toBe(1);
    // The process may take the two in either order.
    expect(twice.output()).toMatch(/(SIGTERM|SIGINT) received while stopping: stopping now; unfinished documents are queued again at the next start\n/);
    // Started with nohup, it keeps ignoring SIGHUP, as nohup asked.
    if (process.platform === "linux" && Bun.which("nohup")) {
      const detached = await serve({}, ["nohup"]);
      process.kill(detached.pid, "SIGHUP");
      await Bun.sleep(300);
      expect((await detached.api.request("GET", "/health")).status).toBe(200);
      expect(detached.output()).not.toContain("SIGHUP received");
      await detached.stop();
    }
    await twice.stop();
  });

  test("runs with the allocator's hole purging off, in the process it was started as; its parser child keeps the allocator's default", async () => {
    const server = await serve();
    try {
      // The pid that was spawned is the one answering: it restarted its own image with the setting.
      expect(environmentOf(server.pid).MIMALLOC_PURGE_HOLES).toBe("0");
      expect((await server.api.request("GET", "/health")).status).toBe(200);
      const account = await signup(server.api);
      const kb = await server.api.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "Allocator" } });
      const added = await server.api.request("POST", `/v1/knowledge-bases/${kb.body.data.id}/documents/text`, {
        token: account.apiKey,
        body: { text: "The parser child process reads this text before it is chunked and embedded." },
      });
      expect(await waitForDocument(server.api, account.apiKey, kb.body.data.id, added.body.data.id)).toMatchObject({ status: "ready" });
      // The ingestion worker keeps its parser child warm between documents.
      const children = childrenOf(server.pid);
      expect(children.length).toBe(1);
      expect(environmentOf(children[0])).not.toHaveProperty("MIMALLOC_PURGE_HOLES");
      expect(environmentOf(children[0])).toHaveProperty("QUARRY_WORKERS", "1");
    } finally {
      await server.stop();
    }
  }, 120_000);

  test("an operator's own MIMALLOC_PURGE_HOLES is left as it is", async () => {
    const server = await serve({ MIMALLOC_PURGE_HOLES: "1" });
    try {
      expect(environmentOf(server.pid).MIMALLOC_PURGE_HOLES).toBe("1");
      expect((await server.api.request("GET", "/health")).status).toBe(200);
    } finally {
      await server.stop();
    }
  }, 60_000);
});

describe("configuration", () => {
  test("a repeated flag takes its last value; flags win over the environment", () => {
    expect(loadConfig({ PORT: "7000" }, ["--port", "9001", "--port=9002"]).port).toBe(9002);
    expect(loadConfig({ QUARRY_WORKERS: "3" }, ["--workers", "1", "--workers", "2"]).workers).toBe(2);
    // an error names what was given: the flag, or the variable
    expect(() => loadConfig({}, ["--workers", "0"])).toThrow('--workers must be a whole number from 1 to 64, got "0"');
    expect(() => loadConfig({}, ["--limits=maybe"])).toThrow('--limits must be "on" or "off", got "maybe"');
    expect(() => loadConfig({ QUARRY_WORKERS: "0" })).toThrow('QUARRY_WORKERS must be a whole number from 1 to 64, got "0"');
    expect(() => loadConfig({}, ["--webhook-secret", "whsec_!!"])).toThrow('--webhook-secret is not a valid Standard Webhooks secret: what follows "whsec_" must be base64');
    expect(() => loadConfig({ QUARRY_WEBHOOK_SECRET: "whsec_!!" })).toThrow('QUARRY_WEBHOOK_SECRET is not a valid Standard Webhooks secret: what follows "whsec_" must be base64');
  });

  test("numbers are digits only and in range: a bad value ends `quarry serve` with its message and exit code 1", async () => {
    const refused: [Record<string, string>, string][] = [
      [{ PORT: "1e4" }, 'PORT must be a whole number from 0 to 65535, got "1e4"'],
      [{ PORT: "65536" }, 'PORT must be a whole number from 0 to 65535, got "65536"'],
      [{ QUARRY_WORKERS: "65" }, 'QUARRY_WORKERS must be a whole number from 1 to 64, got "65"'],
      [{ QUARRY_WORKERS: "0" }, 'QUARRY_WORKERS must be a whole number from 1 to 64, got "0"'],
      [{ QUARRY_PARSE_MEMORY_MB: "1.5" }, 'QUARRY_PARSE_MEMORY_MB must be a whole number 128 or more, got "1.5"'],
      [{ QUARRY_PARSE_MEMORY_MB: "10" }, 'QUARRY_PARSE_MEMORY_MB must be a whole number 128 or more, got "10"'],
      [{ QUARRY_QUERY_CACHE_ENTRIES: "-1" }, 'QUARRY_QUERY_CACHE_ENTRIES must be a whole number 0 or more, got "-1"'],
      [{ QUARRY_INDEX_MEMORY_MB: "99999999999999999999" }, 'QUARRY_INDEX_MEMORY_MB must be a whole number of at most 9007199254740991, got "99999999999999999999"'],
      [{ QUARRY_INDEX_MEMORY_MB: "1e20" }, 'QUARRY_INDEX_MEMORY_MB must be a whole number 1 or more, got "1e20"'],
      [{ QUARRY_WEBHOOK_SECRET: "whsec_" }, 'QUARRY_WEBHOOK_SECRET is not a valid Standard Webhooks secret: it has no key after "whsec_"'],
      [{ QUARRY_RERANK_TIMEOUT_MS: "3000000000" }, 'QUARRY_RERANK_TIMEOUT_MS must be a whole number from 1 to 600000, got "3000000000"'],
    ];
    for (const [env, message] of refused) expect(() => loadConfig(env)).toThrow(message);
    const dataDir = mkdtempSync(join(tmpdir(), "quarry-config-"));
    try {
      const proc = Bun.spawn(["node_modules/.bin/bun", "src/main.ts", "serve", "--data-dir", dataDir, "--port", "1e4"], { stdout: "pipe", stderr: "pipe" });
      expect(await proc.exited).toBe(1);
      expect((await new Response(proc.stderr).text()).trim()).toBe('Configuration error: --port must be a whole number from 0 to 65535, got "1e4"');
      // a data dir that is a file: said in words, not as the system call's error (EEXIST: file already exists, mkdir …)
      const file = join(dataDir, "not-a-folder");
      writeFileSync(file, "");
      const onFile = Bun.spawn(["node_modules/.bin/bun", "src/main.ts", "serve", "--data-dir", file, "--port", "0"], { stdout: "pipe", stderr: "pipe" });
      expect(await onFile.exited).toBe(1);
      expect((await new Response(onFile.stderr).text()).trim()).toBe(`quarry: ${file} is a file, not a directory: choose a directory for the data (--data-dir)`);
      // nor a folder that cannot be made there (ENOENT: no such file or directory, mkdir …)
      const onProc = Bun.spawn(["node_modules/.bin/bun", "src/main.ts", "serve", "--data-dir", "/proc/quarry-data", "--port", "0"], { stdout: "pipe", stderr: "pipe" });
      expect(await onProc.exited).toBe(1);
      expect((await new Response(onProc.stderr).text()).trim()).toBe("quarry: cannot create /proc/quarry-data: no folder can be made there; choose a directory for the data (--data-dir)");
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("a database another user owns", () => {
  const asNobody = process.platform === "linux" && process.getuid?.() === 0 && Bun.which("setpriv") !== null;
  test.if(asNobody)("is refused with its path and the cause, not SQLite's bare 'unable to open database file'", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "quarry-owner-"));
    try {
      openDatabase(join(dataDir, "quarry.db")).close(); // root's, 0600
      chmodSync(dataDir, 0o777);
      const proc = Bun.spawn(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "node_modules/.bin/bun", "src/main.ts", "accounts", "list", "--data-dir", dataDir], { stdout: "pipe", stderr: "pipe" });
      expect(await proc.exited).toBe(1);
      expect((await new Response(proc.stderr).text()).trim()).toBe(
        `quarry: permission denied to access ${join(dataDir, "quarry.db")}: the user running Quarry must be able to write its data directory`,
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("a JWT secret file another user owns", () => {
  const asNobody = process.platform === "linux" && process.getuid?.() === 0 && Bun.which("setpriv") !== null;
  test.if(asNobody)("is refused with its path and what the user running Quarry needs", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "quarry-secret-owner-"));
    try {
      chownSync(dataDir, 65534, 65534);
      const secret = join(dataDir, "jwt-secret");
      writeFileSync(secret, "s".repeat(48), { mode: 0o644 }); // root's, as a mounted secret is
      const proc = Bun.spawn(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "node_modules/.bin/bun", "src/main.ts", "serve", "--port", "0", "--data-dir", dataDir], { stdout: "pipe", stderr: "pipe" });
      expect(await proc.exited).toBe(1);
      expect((await new Response(proc.stderr).text()).trim()).toBe(
        `quarry: permission denied to chmod ${secret}: the user running Quarry must be able to write its data directory`,
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("files in the data dir another user owns", () => {
  const asNobody = process.platform === "linux" && process.getuid?.() === 0 && Bun.which("setpriv") !== null;
  const nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"];
  const chownTree = (path: string) => {
    chownSync(path, 65534, 65534);
    if (statSync(path).isDirectory()) for (const name of readdirSync(path)) chownTree(join(path, name));
  };
  test.if(asNobody)("are left as they are: a root-owned quarry.lock or index folder does not stop a start or fail the sweep, nor a root-owned backup folder the backup", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "quarry-others-"));
    const shared = mkdtempSync(join(tmpdir(), "quarry-others-backup-"));
    try {
      const first = await startTestServer({ dataDir, env: { QUARRY_LIMITS: "off" } });
      const ws = await workspace(first);
      const kept = await ingest(first, ws, new File(["kept words\n"], "kept.txt"));
      await first.server.stop();
      const orphan = join(dataDir, "files", "kb_gone0000000000", "doc_gone00000000", "11111111", "gone.txt");
      mkdirSync(join(orphan, ".."), { recursive: true });
      writeFileSync(orphan, "no row");
      chownTree(dataDir);
      for (const file of [orphan, join(dataDir, kept.storage_path)]) {
        for (let path = file; path !== join(dataDir, "files"); path = join(path, "..")) utimesSync(path, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
      }
      // root's, which nobody may use but not chmod: a stored file, the lock file
      chownSync(join(dataDir, kept.storage_path), 0, 0);
      chmodSync(join(dataDir, kept.storage_path), 0o644);
      chownSync(join(dataDir, "quarry.lock"), 0, 0);
      chmodSync(join(dataDir, "quarry.lock"), 0o666);
      mkdirSync(join(dataDir, "indexes", "kb_other"), { recursive: true });
      writeFileSync(join(dataDir, "indexes", "kb_other", "f"), "x");
      chownSync(join(dataDir, "indexes"), 65534, 65534);
      chmodSync(join(dataDir, "indexes", "kb_other"), 0o755);
      chmodSync(join(dataDir, "indexes", "kb_other", "f"), 0o644);

      const proc = Bun.spawn([...nobody, "node_modules/.bin/bun", "src/main.ts", "serve", "--port", "0", "--data-dir", dataDir], { stdout: "pipe", stderr: "pipe", env: { ...process.env, QUARRY_WORKERS: "1" } });
      const reader = proc.stdout.getReader();
      let output = "";
      while (!output.includes("files: removed 1")) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`quarry serve ended: ${output}${await new Response(proc.stderr).text()}`);
        output += new TextDecoder().decode(value);
      }
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
      const stderr = await new Response(proc.stderr).text();
      expect(stderr).not.toContain("sweeping the stored files failed");
      expect(statSync(join(dataDir, "indexes", "kb_other")).mode & 0o777).toBe(0o755);
      expect(statSync(join(dataDir, kept.storage_path)).mode & 0o777).toBe(0o644);

      chmodSync(shared, 0o777); // root's empty folder, which nobody may write in but not chmod
      const backup = Bun.spawn([...nobody, "node_modules/.bin/bun", "src/main.ts", "backup", shared, "--data-dir", dataDir], { stdout: "pipe", stderr: "pipe" });
      const [backupErr, code] = await Promise.all([new Response(backup.stderr).text(), backup.exited]);
      expect([code, backupErr]).toEqual([0, ""]);
      expect(statSync(join(shared, "quarry.db")).mode & 0o777).toBe(0o600);
      // one nobody may not write in is refused as such, before the copy
      const closed = join(tmpdir(), `quarry-others-closed-${process.pid}`);
      mkdirSync(closed);
      chmodSync(closed, 0o755);
      try {
        const refused = Bun.spawn([...nobody, "node_modules/.bin/bun", "src/main.ts", "backup", closed, "--data-dir", dataDir], { stdout: "pipe", stderr: "pipe" });
        const [refusedErr, refusedCode] = await Promise.all([new Response(refused.stderr).text(), refused.exited]);
        expect([refusedCode, refusedErr.trim()]).toEqual([1, `quarry: cannot write the backup into ${closed}: permission denied; choose another destination`]);
      } finally {
        rmSync(closed, { recursive: true, force: true });
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(shared, { recursive: true, force: true });
    }
  });
});

describe("schema versions", () => {
  test("a data dir written by a newer Quarry is refused, untouched, by serve and by the CLI (a downgrade)", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "quarry-newer-"));
    try {
      const db = openDatabase(join(dataDir, "quarry.db"));
      const newest = db.query<{ v: number }, []>("SELECT MAX(version) AS v FROM schema_migrations").get()!.v;
      db.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'from a newer build', ?)").run(newest + 7, new Date().toISOString());
      db.close();
      for (const command of [["serve", "--port", "0"], ["accounts", "list"]]) {
        const proc = Bun.spawn(["node_modules/.bin/bun", "src/main.ts", ...command, "--data-dir", dataDir], { stdout: "pipe", stderr: "pipe" });
        expect(await proc.exited).toBe(1);
        expect((await new Response(proc.stderr).text()).trim()).toBe(
          `quarry: the database was written by a newer Quarry (schema version ${newest + 7}; this build knows up to ${newest}): run that version or a newer one, or restore a backup made by this one`,
        );
      }
      const after = openDatabase(join(dataDir, "quarry.db"), { migrate: false });
      expect(after.query<{ n: number }, [number]>("SELECT COUNT(*) AS n FROM schema_migrations WHERE version > ?").get(newest)!.n).toBe(1);
      after.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
