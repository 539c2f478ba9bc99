// `npm run build`: compiles Quarry into dist/quarry, one executable that runs with no node_modules
// next to it. Bun bundles the JavaScript, the worker entries and files imported `with { type: "file" }`.
// Native code and the built-in models (every folder in models/) are staged under dist/.stage/quarry-runtime
// and embedded as an asset that src/runtime unpacks next to the data dir at startup; each native addon
// (*.node) in the bundle is replaced by a loader for its unpacked copy (see src/runtime/layout.ts).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import type { BunPlugin } from "bun";
import { getLoadablePath } from "sqlite-vec";
import {
  BUILD_INFO_FILE,
  COMPRESSED_SUFFIX,
  EMBEDDED_DIR,
  LIBRARY_DIR,
  MODELS_DIR,
  PACKAGE_DATA,
  PACKAGES_DIR,
  RUNTIME_DIR_ENV,
  VECTOR_EXTENSION_FILE,
} from "../src/runtime/layout.ts";
import { packageDir } from "../src/runtime/package-dir.ts";
import pkg from "../package.json" with { type: "json" };

const root = resolve(import.meta.dir, "..");
const outfile = join(root, "dist", "quarry");
const stageRoot = join(root, "dist", ".stage");
const stage = join(stageRoot, EMBEDDED_DIR);
const entrypoints = [join(root, "src", "main.ts"), ...workerEntries()];

/** Every non-hidden file under `dir`, as paths relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => !entry.name.startsWith("."))
    .flatMap((entry) =>
      entry.isDirectory() ? filesUnder(join(dir, entry.name)).map((file) => join(entry.name, file)) : entry.isFile() ? [entry.name] : [],
    );
}

/**
 * Worker entry files: every `new URL("./x.ts", import.meta.url)` in src/ (how Quarry starts workers).
 * A compiled binary contains only the entries it was built with, so they are found rather than listed.
 */
function workerEntries(): string[] {
  const pattern = /new URL\(\s*["'](\.{1,2}\/[^"']+\.[cm]?[jt]s)["']\s*,\s*import\.meta\.url\s*\)/g;
  const entries = new Set<string>();
  for (const file of filesUnder(join(root, "src")).filter((f) => f.endsWith(".ts"))) {
    const path = join(root, "src", file);
    for (const match of readFileSync(path, "utf8").matchAll(pattern)) {
      const entry = resolve(dirname(path), match[1]);
      if (!existsSync(entry)) throw new Error(`${relative(root, path)} starts a worker from ${match[1]}, which does not exist`);
      entries.add(entry);
    }
  }
  const names = [...entries].map((entry) => basename(entry));
  const clash = names.find((name, i) => names.indexOf(name) !== i);
  if (clash) throw new Error(`Two worker entries are named ${clash}: the binary keeps them side by side, so names must differ`);
  return [...entries].sort();
}

/** Replaces every native addon in the bundle with a loader for its unpacked copy, and collects their paths. */
function nativeAddonLoaders(addons: Set<string>): BunPlugin {
  return {
    name: "native-addon-loaders",
    setup(build) {
      build.onLoad({ filter: /\.node$/ }, ({ path }) => {
        addons.add(path);
        const name = JSON.stringify(basename(path));
        return {
          loader: "js",
          contents: `const dir = process.env.${RUNTIME_DIR_ENV};
if (!dir) throw new Error("Native addon " + ${name} + " was loaded before the embedded runtime was unpacked (prepareRuntime in src/runtime; workers need env: SHARE_ENV)");
module.exports = require(dir + "/${LIBRARY_DIR}/" + ${name});`,
        };
      });
    },
  };
}

/**
 * pdfjs-dist loads @napi-rs/canvas with a require it creates at run time, which finds no packages inside a
 * compiled binary (it warns at every start, and its default canvas factory fails). This gives it the
 * bundled module instead: the project's own version, which the parsers already hand to pdfjs, rather than
 * a second copy of Skia from pdfjs-dist's nested dependency.
 */
function pdfjsCanvasRequire(): BunPlugin {
  const runtimeRequire = 'process.getBuiltinModule("module").createRequire(import.meta.url)';
  const bundledRequire = `((id) => { if (id === "@napi-rs/canvas") return bundledNapiCanvas; throw new Error("Cannot require " + id); })`;
  return {
    name: "pdfjs-canvas-require",
    setup(build) {
      build.onLoad({ filter: /[\\/]pdfjs-dist[\\/]legacy[\\/]build[\\/]pdf\.mjs$/ }, async ({ path }) => {
        const source = await Bun.file(path).text();
        if (!source.includes(runtimeRequire)) throw new Error(`${path} no longer loads @napi-rs/canvas as scripts/build.ts expects`);
        const canvas = JSON.stringify(Bun.resolveSync("@napi-rs/canvas", root));
        return { loader: "js", contents: `import bundledNapiCanvas from ${canvas};\n${source.replaceAll(runtimeRequire, bundledRequire)}` };
      });
    },
  };
}

/** Shared libraries beside an addon, which it links against through its run path (libonnxruntime.so.1). */
function siblingLibraries(addon: string): string[] {
  return readdirSync(dirname(addon))
    .filter((name) => /\.(so(\.\d+)*|dylib)$/.test(name))
    .map((name) => join(dirname(addon), name));
}

/** What the binary unpacks: path under EMBEDDED_DIR → source file. */
function runtimeFiles(addons: Set<string>): Map<string, string> {
  const files = new Map<string, string>();
  const add = (stagedPath: string, source: string) => {
    if (files.has(stagedPath)) throw new Error(`Both ${files.get(stagedPath)} and ${source} would be unpacked to ${stagedPath}`);
    files.set(stagedPath, source);
  };
  add(VECTOR_EXTENSION_FILE, getLoadablePath());
  for (const addon of addons) {
    for (const file of [addon, ...siblingLibraries(addon)]) add(join(LIBRARY_DIR, basename(file)), file);
  }
  for (const [name, folders] of Object.entries(PACKAGE_DATA)) {
    for (const folder of folders) {
      const source = join(packageDir(name as keyof typeof PACKAGE_DATA), folder);
      for (const file of filesUnder(source)) add(join(PACKAGES_DIR, name, folder, file), join(source, file));
    }
  }
  const modelsRoot = join(root, "models");
  const modelFolders = readdirSync(modelsRoot, { withFileTypes: true }).filter((e) => e.isDirectory() && !e.name.startsWith("."));
  if (!modelFolders.some((folder) => folder.name === "use-lite")) {
    throw new Error("models/use-lite is missing: run `node scripts/ensure-deps.mjs` (it generates the default model) before building");
  }
  for (const { name } of modelFolders) {
    for (const file of filesUnder(join(modelsRoot, name))) add(join(MODELS_DIR, name, file), join(modelsRoot, name, file));
  }
  return files;
}

/**
 * Stages the runtime files, zstd-compressed where that saves at least a tenth (native code shrinks to a
 * third; model weights hardly shrink), and returns the build id: version + hash of every file's content.
 */
function stageRuntimeFiles(addons: Set<string>): { id: string; files: number } {
  rmSync(stageRoot, { recursive: true, force: true });
  const hash = new Bun.CryptoHasher("sha256");
  const files = [...runtimeFiles(addons)].sort(([a], [b]) => a.localeCompare(b));
  for (const [stagedPath, source] of files) {
    const content = readFileSync(source);
    hash.update(stagedPath).update("\0").update(content).update("\0");
    const compressed = Bun.zstdCompressSync(content, { level: 3 });
    const keepCompressed = compressed.length < 0.9 * content.length;
    const target = join(stage, keepCompressed ? stagedPath + COMPRESSED_SUFFIX : stagedPath);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, keepCompressed ? compressed : content);
  }
  const id = `${pkg.version}-${hash.digest("hex").slice(0, 16)}`;
  writeFileSync(join(stage, BUILD_INFO_FILE), JSON.stringify({ id }));
  return { id, files: files.length };
}

const bundleOptions = (addons: Set<string>) => ({
  entrypoints,
  target: "bun" as const,
  // As in a compiled binary, so that platform-specific requires (onnxruntime-node's binding) resolve to one file.
  define: { "process.platform": JSON.stringify(process.platform), "process.arch": JSON.stringify(process.arch) },
  plugins: [nativeAddonLoaders(addons), pdfjsCanvasRequire()],
});

const started = performance.now();
// A first, in-memory bundle finds the native addons, which must be staged before the compile embeds them.
const addons = new Set<string>();
await Bun.build(bundleOptions(addons));
const { id, files } = stageRuntimeFiles(addons);
await Bun.build({
  ...bundleOptions(new Set()),
  format: "esm",
  minify: true,
  bytecode: true,
  // Flat: every module of the main bundle resolves `new URL("./worker.ts", import.meta.url)` from the root.
  naming: "[name].[ext]",
  // A bunfig.toml in the working directory could preload code into the server; .env files still load as with `npm start`.
  compile: { outfile, assets: [stage], autoloadBunfig: false },
});
rmSync(stageRoot, { recursive: true, force: true });

console.log(
  [
    `Built ${relative(root, outfile)} (${(statSync(outfile).size / 1024 / 1024).toFixed(0)} MB) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    `  runtime   ${files} files unpacked to <data dir>/.runtime/${id}/ on first start`,
    `  addons    ${[...addons].map((a) => relative(root, a)).join(", ")}`,
    `  workers   ${entrypoints.slice(1).map((w) => relative(root, w)).join(", ")}`,
  ].join("\n"),
);
