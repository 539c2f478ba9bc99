#!/usr/bin/env bun
// The quarry command: `quarry serve` (default), `quarry reindex`, `quarry accounts …`, `quarry backup`.
// Each command imports what it runs when it runs: serve and reindex may first restart the process
// (runtime/allocator.ts), and a parser child needs little of the rest.
import { readFileSync } from "node:fs";
import { commandArguments, loadConfig, ConfigError, CONFIG_HELP, type Config } from "./config.ts";
import { CliError } from "./cli/cli-error.ts";
import { assertDatabaseExists } from "./cli/existing-database.ts";
import { restartWithoutPurgingHoles } from "./runtime/allocator.ts";
import { PARSE_CHILD_COMMAND } from "./ingest/parse-protocol.ts";
import pkg from "../package.json" with { type: "json" };

const VERSION = pkg.version;

const USAGE = `Quarry ${VERSION} — self-hosted knowledge-base retrieval

Usage:
  quarry [serve] [options]          start the API server
  quarry reindex [options]          re-embed every chunk with the configured embedding model
  quarry accounts list              list accounts and their plans
  quarry accounts set-plan <account id or email> <plan>
  quarry backup <directory>         copy the data dir consistently, also while the server runs
  quarry --version                  print the version

Every command takes --data-dir (or QUARRY_DATA_DIR). Options, as a flag or an environment variable (the flag
wins), with their defaults in brackets:
${CONFIG_HELP}
`;

/**
 * The configuration, with a compiled binary's embedded files unpacked before anything loads native code.
 * `takesArguments`: whether the command reads words besides its options (accounts does); `existingStore`:
 * whether it works on an existing database (checked before the runtime is unpacked into the data dir).
 */
async function configure(argv: string[], { takesArguments = false, existingStore = false } = {}): Promise<Config> {
  const [stray] = commandArguments(argv);
  if (stray !== undefined && !takesArguments) throw new ConfigError(`unexpected argument "${stray}" (quarry --help shows the usage)`);
  const config = loadConfig(process.env, argv);
  if (existingStore) assertDatabaseExists(config.dataDir);
  const { prepareRuntime } = await import("./runtime/index.ts");
  await prepareRuntime(config.dataDir);
  return config;
}

async function serve(argv: string[]): Promise<void> {
  const config = await configure(argv);
  // The models load on their own threads while the server's modules are imported (~0.2 s). A failure is
  // reported by startServer, which awaits them.
  const { loadServerModels } = await import("./models/server-models.ts");
  const models = loadServerModels(config);
  models.catch(() => {});
  // Both imported after configure(): in a compiled binary it unpacks the native libraries they load
  // (ONNX Runtime on the model threads, sqlite-vec with the database).
  const { startServer } = await import("./server.ts");
  const started = startServer(config, { log: console.log, models });
  let received = 0;
  const shutdown = async (signal: string) => {
    if (++received > 1) {
      console.log(`${signal} received while stopping: stopping now; unfinished documents are queued again at the next start`);
      process.exit(1);
    }
    console.log(`${signal} received: finishing in-flight work…`);
    const server = await started.catch(() => null); // a start that failed is reported (and ends) below
    if (!server) return;
    const cutOff = await server.stop();
    console.log(cutOff === 0 ? "Stopped cleanly." : "Stopped.");
    process.exit(0);
  };
  // Taken before the server listens, so that a signal right after its banner still stops it gracefully; and
  // SIGHUP too: closing the terminal or ssh session that runs the server would otherwise end it mid-request.
  // Unless it was started to ignore SIGHUP (nohup): a handler would undo that.
  const signals: NodeJS.Signals[] = hangupIgnored() ? ["SIGTERM", "SIGINT"] : ["SIGTERM", "SIGINT", "SIGHUP"];
  for (const signal of signals) process.on(signal, () => void shutdown(signal));
  await started;
}

async function main(argv: string[]): Promise<void> {
  // Help wins wherever it is asked for: "quarry reindex --help" must not start re-embedding.
  if (argv.some((word) => word === "--help" || word === "-h")) {
    console.log(USAGE);
    return;
  }
  // Options without a command are serve's, except the help and version flags, which are commands.
  const isCommand = !argv[0]?.startsWith("-") || ["--help", "-h", "--version"].includes(argv[0]);
  const [command = "serve", ...rest] = isCommand ? argv : ["serve", ...argv];
  switch (command) {
    case "serve":
      restartWithoutPurgingHoles();
      return serve(rest);
    case "reindex": {
      restartWithoutPurgingHoles();
      const { reindex } = await import("./cli/reindex.ts");
      await reindex(await configure(rest, { existingStore: true }));
      return;
    }
    case "accounts": {
      const { accountsCommand } = await import("./cli/accounts.ts");
      console.log(accountsCommand(await configure(rest, { takesArguments: true, existingStore: true }), rest));
      return;
    }
    case "backup": {
      const { backupCommand } = await import("./cli/backup.ts");
      console.log(backupCommand(await configure(rest, { takesArguments: true, existingStore: true }), rest));
      return;
    }
    case "help":
    case "--help":
    case "-h":
      console.log(USAGE);
      return;
    case "version":
    case "--version":
      console.log(VERSION);
      return;
    // Hidden: an ingestion worker's parser process (src/ingest/parse-child.ts). It inherits the worker's
    // environment, which already points at the unpacked runtime of a compiled binary.
    case PARSE_CHILD_COMMAND:
      (await import("./ingest/parse-child.ts")).runParseChild();
      return;
    default:
      console.error(`Unknown command "${command}".\n\n${USAGE}`);
      process.exit(2);
  }
}

/** Whether this process was started with SIGHUP ignored (nohup); Linux tells in /proc (bit 0 of SigIgn is SIGHUP). */
function hangupIgnored(): boolean {
  try {
    const mask = /^SigIgn:\s*([0-9a-f]+)$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
    return mask !== undefined && (BigInt(`0x${mask}`) & 1n) === 1n;
  } catch {
    return false; // not Linux: SIGHUP stops it gracefully
  }
}

/** A file system error in the operator's words: which path, and what to do about it. */
function fileSystemMessage(error: { code?: string; path?: string; syscall?: string; message?: string }): string | null {
  const { code, path, syscall } = error;
  if (!path) return null;
  if (code === "EACCES" || code === "EPERM") return `permission denied to ${syscall ?? "use"} ${path}: the user running Quarry must be able to write its data directory`;
  if (code === "EEXIST" && syscall === "mkdir") return `${path} is a file, not a directory: choose a directory for the data (--data-dir)`;
  if (code === "ENOTDIR") return `a folder on the way to ${path} is a file: choose a directory for the data (--data-dir)`;
  if (code === "ENOENT" && syscall === "mkdir") return `cannot create ${path}: no folder can be made there; choose a directory for the data (--data-dir)`;
  if (code === "ENOSPC" || code === "EDQUOT") return `no space left for ${path}`;
  if (code === "EROFS") return `${path} is on a read-only file system`;
  return null;
}

main(process.argv.slice(2)).catch((error) => {
  if (error instanceof CliError) {
    console.error(error.message);
    process.exit(2);
  }
  const message = error instanceof ConfigError ? `Configuration error: ${error.message}` : `quarry: ${fileSystemMessage(error ?? {}) ?? error?.message ?? error}`;
  console.error(message);
  process.exit(1);
});
