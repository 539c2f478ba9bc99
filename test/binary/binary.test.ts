// The single executable: built by `npm run build` (or reused when newer than everything it is built
// from), copied alone into an empty directory with no node_modules, started with a fresh data dir,
// and driven over HTTP like a user would: health, signup, knowledge base, a text document and a
// scanned PDF (pdfjs, Skia and Tesseract inside the binary) through the ingestion worker, shutdown.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { request, serverAt, signup, waitForDocument } from "../helpers/server.ts";
import { ensureFixtures } from "../fixtures.ts";
import { childrenOf, environmentOf } from "../helpers/processes.ts";
import pkg from "../../package.json" with { type: "json" };

const ROOT = resolve(import.meta.dir, "../..");
const BUILT_BINARY = join(ROOT, "dist", "quarry");
/** What the binary is built from: rebuilt when any of these is newer than dist/quarry. */
const BUILD_INPUTS = ["src", "models", "scripts/build.ts", "package-lock.json"].map((path) => join(ROOT, path));

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

function ensureBinary(): void {
  if (existsSync(BUILT_BINARY) && statSync(BUILT_BINARY).mtimeMs > Math.max(...BUILD_INPUTS.map(newestMtime))) return;
  const build = Bun.spawnSync([process.execPath, "scripts/build.ts"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (build.exitCode !== 0) throw new Error(`npm run build failed:\n${build.stdout}\n${build.stderr}`);
}

interface RunningBinary {
  url: string;
  process: Bun.Subprocess<"ignore", "pipe", "pipe">;
  output: () => string;
}

/** Every file and folder under a folder (itself included). */
function walk(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return [path, ...readdirSync(path).flatMap((name) => walk(join(path, name)))];
}

/** Starts `<dir>/quarry serve` in `dir` on a free port with the data in <dir>/data; resolves once it listens. */
async function startBinary(dir: string): Promise<RunningBinary> {
  const child = Bun.spawn([join(dir, "quarry"), "serve"], {
    cwd: dir,
    // Only what a user's shell would have: nothing from this repository or the test run leaks in. Limits
    // off: the test polls documents faster than a trial account may.
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: dir,
      PORT: "0",
      QUARRY_HOST: "127.0.0.1",
      QUARRY_DATA_DIR: join(dir, "data"),
      QUARRY_WORKERS: "1",
      QUARRY_LIMITS: "off",
      // Every change folds into an on-disk search segment, so searches also run through its vector index
      // and its WebAssembly kernels.
      QUARRY_SEGMENT_MIN_CHANGES: "1",
      QUARRY_METRICS_TOKEN: METRICS_TOKEN,
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let output = "";
  const decoder = new TextDecoder();
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    const reader = stream.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) output += decoder.decode(read.value, { stream: true });
  };
  void collect(child.stdout);
  void collect(child.stderr);
  for (;;) {
    const listening = output.match(/listening on (http:\/\/\S+?)\/api/);
    if (listening) return { url: `${listening[1]}/api`, process: child, output: () => output };
    if (child.exitCode !== null) throw new Error(`quarry exited with ${child.exitCode} before listening:\n${output}`);
    await Bun.sleep(20);
  }
}

async function stop(running: RunningBinary): Promise<number> {
  running.process.kill("SIGTERM");
  return running.process.exited;
}

const METRICS_TOKEN = "binary-metrics-0123456789";
/** The folder another build of the same version would unpack into. */
const OTHER_BUILD = `${pkg.version}-0000000000000000`;
let workDir: string;
let dataDir: string;
let running: RunningBinary;

beforeAll(async () => {
  ensureBinary();
  workDir = mkdtempSync(join(tmpdir(), "quarry-binary-"));
  dataDir = join(workDir, "data");
  copyFileSync(BUILT_BINARY, join(workDir, "quarry"));
  running = await startBinary(workDir);
}, 180_000);

afterAll(() => {
  if (running?.process.exitCode === null) running.process.kill("SIGKILL");
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe("the compiled binary, alone in an empty directory", () => {
  test("answers /api/health with the embedded default model", async () => {
    const health = await request(running.url, "GET", "/health");
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: "ok", version: pkg.version, models: { embedding: { id: "use-lite", dimension: 512 } } });
    expect(existsSync(join(workDir, "node_modules"))).toBe(false);
  });

  test("serves the OpenAPI document, whose generator it loads at the first request for it", async () => {
    const openapi = await request(running.url, "GET", "/openapi.json");
    expect(openapi.status).toBe(200);
    expect(openapi.body).toMatchObject({ openapi: "3.1.0", info: { title: "Quarry API", version: pkg.version } });
    expect(Object.keys((openapi.body as { paths: object }).paths)).toContain("/api/v1/knowledge-bases/{kb_id}/search");
  });

  test("unpacks its native libraries and models into one folder next to the data", () => {
    const builds = readdirSync(join(dataDir, ".runtime"));
    expect(builds).toEqual([expect.stringMatching(new RegExp(`^${pkg.version}-[0-9a-f]{16}$`))]);
    const unpacked = join(dataDir, ".runtime", builds[0]);
    for (const file of ["lib/vec0.so", "lib/libonnxruntime.so.1", "lib/onnxruntime_binding.node", "models/use-lite/model.onnx", "models/use-lite/model.onnx.data"]) {
      expect(existsSync(join(unpacked, file))).toBe(true);
    }
    // Private, like the rest of the data dir (the test runs under the usual umask 022).
    const modes = new Set(walk(unpacked).map((path) => (statSync(path).mode & 0o777).toString(8)));
    expect(modes).toEqual(new Set(["700", "600"]));
    // Native code is loaded from there, never from a temporary directory.
    const mapped = readFileSync(`/proc/${running.process.pid}/maps`, "utf8");
    expect(mapped).toContain(join(unpacked, "lib", "libonnxruntime.so.1"));
    expect(mapped).toContain(join(unpacked, "lib", "vec0.so"));
    expect(mapped).not.toMatch(/\.bun-[^/\n]*\.node/);
  });

  test("signup, knowledge base and a text document that the ingestion worker makes ready", async () => {
    const api = serverAt(running.url);
    const account = await signup(api);
    const kb = await api.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "Binary smoke test" } });
    expect(kb.status).toBe(201);
    const text = "Quarry ships as one executable. The harbour pilot boards incoming freighters at the outer buoy.";
    const added = await api.request("POST", `/v1/knowledge-bases/${kb.body.data.id}/documents/text`, { token: account.apiKey, body: { text } });
    expect(added.status).toBe(202);
    const document = await waitForDocument(api, account.apiKey, kb.body.data.id, added.body.data.id);
    expect(document).toMatchObject({ status: "ready", chunk_count: 1 });
    const chunks = await api.request("GET", `/v1/knowledge-bases/${kb.body.data.id}/documents/${document.id}/chunks`, { token: account.apiKey });
    expect(chunks.body.data[0].text).toBe(text);
    for (const mode of ["keyword", "vector", "hybrid"]) {
      const search = await api.request("POST", `/v1/knowledge-bases/${kb.body.data.id}/search`, {
        token: account.apiKey,
        body: { query: "who boards the freighters?", mode },
      });
      expect(search.status).toBe(200);
      expect(search.body.data.results[0]).toMatchObject({ document_id: document.id, text });
      expect(search.body.data.usage.search_mode).toBe(mode);
    }
    // The index worker (a worker thread of the binary) folds the chunk into a segment, searched from the
    // search threads (search-thread.ts).
    const segments = join(dataDir, "indexes", kb.body.data.id);
    const built = () => existsSync(segments) && readdirSync(segments).some((name) => existsSync(join(segments, name, "vector", "vectors.json")));
    for (let waited = 0; !built() && waited < 60_000; waited += 250) await Bun.sleep(250);
    expect(built()).toBe(true);
    for (const mode of ["keyword", "vector", "hybrid"]) {
      const search = await api.request("POST", `/v1/knowledge-bases/${kb.body.data.id}/search`, {
        token: account.apiKey,
        body: { query: "who boards the freighters?", mode },
      });
      expect(search.body.data.results[0]).toMatchObject({ document_id: document.id, text });
    }
  }, 120_000);

  test("a scanned PDF is rendered and read by OCR inside the binary", async () => {
    const fixtures = await ensureFixtures();
    const api = serverAt(running.url);
    const account = await signup(api);
    const kb = await api.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "Scans" } });
    const file = new File([readFileSync(join(fixtures.dir, "scanned.pdf"))], "scanned.pdf", { type: "application/pdf" });
    const uploaded = await api.request("POST", `/v1/knowledge-bases/${kb.body.data.id}/documents`, { token: account.apiKey, form: { file } });
    expect(uploaded.status).toBe(202);
    const document = await waitForDocument(api, account.apiKey, kb.body.data.id, uploaded.body.data.id);
    expect(document).toMatchObject({ status: "ready", page_count: 1 });
    const chunks = await api.request("GET", `/v1/knowledge-bases/${kb.body.data.id}/documents/${document.id}/chunks`, { token: account.apiKey });
    expect(chunks.body.data.map((chunk: { text: string }) => chunk.text).join(" ").toLowerCase()).toContain("lighthouse keeper logbook");
  }, 120_000);

  test("runs with the allocator's hole purging off in the process it was started as; its parser child keeps the default", () => {
    expect(environmentOf(running.process.pid).MIMALLOC_PURGE_HOLES).toBe("0");
    const children = childrenOf(running.process.pid);
    expect(children.length).toBe(1);
    expect(environmentOf(children[0])).not.toHaveProperty("MIMALLOC_PURGE_HOLES");
  });

  test("serves Prometheus metrics (prom-client inside the binary) to its metrics token", async () => {
    const res = await fetch(`${running.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain(`quarry_build_info{version="${pkg.version}"} 1`);
    expect(text).toContain('quarry_http_requests_total{method="GET",route="/api/health",status="200"} 1');
    expect(text).toMatch(/\nquarry_documents_processed_total\{outcome="ready"\} 2\n/);
    // The banner says where they are; the token itself is never printed.
    expect(running.output()).toContain(`  metrics    ${running.url}/metrics (bearer QUARRY_METRICS_TOKEN)`);
    expect(running.output()).not.toContain(METRICS_TOKEN);
  });

  test("`quarry backup` copies the data dir it serves, while it runs", () => {
    // Another build's unpacked files, as an upgrade leaves them: a command run beside a server leaves them
    // alone (that server may be the other build); the next start, holding the data dir, removes them.
    mkdirSync(join(dataDir, ".runtime", OTHER_BUILD, "lib"), { recursive: true });
    const run = Bun.spawnSync([join(workDir, "quarry"), "backup", join(workDir, "backup")], {
      cwd: workDir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: workDir, QUARRY_DATA_DIR: dataDir },
    });
    expect(run.stderr.toString()).toBe("");
    expect(run.exitCode).toBe(0);
    expect(run.stdout.toString()).toMatch(/\n {2}files {5}2 files \(/);
    expect(existsSync(join(workDir, "backup", "quarry.db"))).toBe(true);
    expect(existsSync(join(dataDir, ".runtime", OTHER_BUILD, "lib"))).toBe(true);
  });

  test("`quarry --version` prints the version and exits", () => {
    const run = Bun.spawnSync([join(workDir, "quarry"), "--version"], { cwd: workDir, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
    expect(run.exitCode).toBe(0);
    expect(run.stdout.toString().trim()).toBe(pkg.version);
  });

  test("SIGTERM stops it cleanly with exit code 0", async () => {
    expect(await stop(running)).toBe(0);
    expect(running.output()).toContain("Stopped cleanly.");
  }, 60_000);

  test("a second start reuses the unpacked files and the data, and removes another build's", async () => {
    const builds = () => readdirSync(join(dataDir, ".runtime")).map((name) => [name, statSync(join(dataDir, ".runtime", name)).mtimeMs]);
    const before = builds().filter(([name]) => name !== OTHER_BUILD);
    running = await startBinary(workDir);
    const health = await request(running.url, "GET", "/health");
    expect(health.status).toBe(200);
    expect(builds()).toEqual(before);
    expect(await stop(running)).toBe(0);
  }, 120_000);

  test("a start after a file of the unpacked folder was lost unpacks it again", async () => {
    const [build] = readdirSync(join(dataDir, ".runtime"));
    const unpacked = join(dataDir, ".runtime", build);
    rmSync(join(unpacked, "lib", "vec0.so"));
    rmSync(join(unpacked, "models", "use-lite", "model.onnx"));
    running = await startBinary(workDir);
    const health = await request(running.url, "GET", "/health");
    expect(health.status).toBe(200);
    expect(existsSync(join(unpacked, "lib", "vec0.so"))).toBe(true);
    expect(existsSync(join(unpacked, "models", "use-lite", "model.onnx"))).toBe(true);
    // The damaged copy was moved aside under an abandoned unpacking's name, for a later start to remove.
    expect(readdirSync(join(dataDir, ".runtime")).filter((name) => name !== build)).toEqual([expect.stringMatching(new RegExp(`^${build}\\.partial-unusable-\\d+$`))]);
    // The model and sqlite-vec load from the new copy: a document is embedded and found by vector search.
    const api = serverAt(running.url);
    const account = await signup(api);
    const kb = await api.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "After the repair" } });
    const text = "The lighthouse keeper winds the clockwork every four hours.";
    const added = await api.request("POST", `/v1/knowledge-bases/${kb.body.data.id}/documents/text`, { token: account.apiKey, body: { text } });
    expect(await waitForDocument(api, account.apiKey, kb.body.data.id, added.body.data.id)).toMatchObject({ status: "ready" });
    const search = await api.request("POST", `/v1/knowledge-bases/${kb.body.data.id}/search`, { token: account.apiKey, body: { query: "who winds the clockwork?", mode: "vector" } });
    expect(search.body.data.results[0]).toMatchObject({ document_id: added.body.data.id, text });
    expect(await stop(running)).toBe(0);
  }, 120_000);

  test("a folder without its list of files (as an older executable of the same runtime unpacked it) is unpacked again", async () => {
    const build = readdirSync(join(dataDir, ".runtime")).find((name) => !name.includes(".partial-"))!;
    const unpacked = join(dataDir, ".runtime", build);
    rmSync(join(unpacked, ".contents.json"));
    rmSync(join(unpacked, "lib", "vec0.so"));
    running = await startBinary(workDir);
    expect((await request(running.url, "GET", "/health")).status).toBe(200);
    expect(existsSync(join(unpacked, "lib", "vec0.so"))).toBe(true);
    expect(existsSync(join(unpacked, ".contents.json"))).toBe(true);
    expect(await stop(running)).toBe(0);
  }, 120_000);
});
