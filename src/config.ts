// Configuration from the environment, overridden by matching CLI flags (--port, --data-dir, …).
import { cpuCount } from "./cpu-count.ts";
import { resolve } from "node:path";
import { Webhook } from "standardwebhooks";

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** At least MIN_JWT_SECRET_BYTES; null: generated once and kept in the data dir (see accounts/jwt-secret.ts). */
  jwtSecret: string | null;
  /** Standard Webhooks secret ("whsec_…"); null rejects every webhook delivery. */
  webhookSecret: string | null;
  modelsDir: string;
  embedModel: string;
  rerankModel: string | null;
  /** Milliseconds the reranker may take before search returns unreranked results. */
  rerankTimeoutMs: number;
  workers: number;
  /** false (QUARRY_LIMITS=off): no plan allowance, count or rate limit is enforced; usage is still metered. */
  limitsEnabled: boolean;
  /** Resident memory, in MiB, a document's parser process may use before it is stopped and the document fails. */
  parseMemoryMb: number;
  /** QUARRY_TRUST_PROXY=on: behind a reverse proxy, the client IP is the last X-Forwarded-For entry. */
  trustProxy: boolean;
  /** MiB the in-memory parts of the search indexes (documents, deltas) may take across knowledge bases. */
  indexMemoryMb: number;
  /** Changes to a knowledge base that make the index worker build it a new on-disk segment (search/index-worker.ts). */
  segmentMinChanges: number;
  /** Query embeddings kept for searches asked again (search/query-embeddings.ts); 0 keeps none. */
  queryCacheEntries: number;
  /** Bearer token for GET /api/metrics (at least MIN_METRICS_TOKEN_LENGTH characters); null: no metrics served. */
  metricsToken: string | null;
}

/**
 * The server (~300 MB under hostile uploads), another worker's parser (~220 MB) and a capped one must stay
 * within the 1.5 GB the hostile-input harness bounds the process tree by: at 1024 MB, fuzz seed 28 peaked at
 * 1,503-1,557 MB (server 301 + capped parser 1,025 + the other parser 220); at 960, 1,484 MB.
 */
export const DEFAULT_PARSE_MEMORY_MB = 960;
/** A parser process takes ~35 MB before it reads a file: below this every rich document would fail. */
const MIN_PARSE_MEMORY_MB = 128;

/**
 * Every setting: its environment variable, its flag, what `quarry --help` says of it, and its default
 * (`value`, which loadConfig reads, or `help` saying what happens when it is not set).
 */
const OPTIONS = {
  port: { env: "PORT", flag: "--port", help: "HTTP port", value: "8080" },
  host: { env: "QUARRY_HOST", flag: "--host", help: "interface to listen on", value: "0.0.0.0" },
  dataDir: { env: "QUARRY_DATA_DIR", flag: "--data-dir", help: "where quarry.db and the files live", value: "./data" },
  jwtSecret: { env: "QUARRY_JWT_SECRET", flag: "--jwt-secret", help: "signs dashboard JWTs, 32 bytes or more (generated once)" },
  webhookSecret: { env: "QUARRY_WEBHOOK_SECRET", flag: "--webhook-secret", help: "payment webhook secret, whsec_… (none: webhooks refused)" },
  modelsDir: { env: "QUARRY_MODELS_DIR", flag: "--models-dir", help: "where extra models are looked up", value: "./models" },
  embedModel: { env: "QUARRY_EMBED_MODEL", flag: "--embed-model", help: "embedding model folder", value: "use-lite" },
  rerankModel: { env: "QUARRY_RERANK_MODEL", flag: "--rerank-model", help: "cross-encoder folder (none: no reranking)" },
  rerankTimeoutMs: { env: "QUARRY_RERANK_TIMEOUT_MS", flag: "--rerank-timeout-ms", help: "reranker deadline in ms", value: "2000" },
  workers: { env: "QUARRY_WORKERS", flag: "--workers", help: "ingestion workers, 1-64 (one per CPU core)" },
  limits: { env: "QUARRY_LIMITS", flag: "--limits", help: "on or off: plan allowances and per-account rates", value: "on" },
  parseMemoryMb: { env: "QUARRY_PARSE_MEMORY_MB", flag: "--parse-memory-mb", help: `MB one document's parser may use (at least ${MIN_PARSE_MEMORY_MB})`, value: String(DEFAULT_PARSE_MEMORY_MB) },
  trustProxy: { env: "QUARRY_TRUST_PROXY", flag: "--trust-proxy", help: "on behind a proxy: client IPs from X-Forwarded-For", value: "off" },
  indexMemoryMb: { env: "QUARRY_INDEX_MEMORY_MB", flag: "--index-memory-mb", help: "MB budget of the search indexes", value: "512" },
  segmentMinChanges: { env: "QUARRY_SEGMENT_MIN_CHANGES", flag: "--segment-min-changes", help: "changes that make a new index segment", value: "2000" },
  queryCacheEntries: { env: "QUARRY_QUERY_CACHE_ENTRIES", flag: "--query-cache-entries", help: "query embeddings kept, 0 for none", value: "1024" },
  metricsToken: { env: "QUARRY_METRICS_TOKEN", flag: "--metrics-token", help: "bearer token of /api/metrics (none: no metrics)" },
} satisfies Record<string, { env: string; flag: string; help: string; value?: string }>;

export const CONFIG_HELP = Object.values(OPTIONS)
  .map((o) => `  ${o.flag.padEnd(22)} ${o.env.padEnd(27)} ${o.help}${"value" in o ? ` (${o.value})` : ""}`)
  .join("\n");

export class ConfigError extends Error {}

/** A metrics token is a shared secret for a scraper's config: long enough not to be guessed. */
export const MIN_METRICS_TOKEN_LENGTH = 16;

/** HS256 keys shorter than the hash output (32 bytes) make tokens guessable offline. */
export const MIN_JWT_SECRET_BYTES = 32;

const FLAGS = new Set<string>(Object.values(OPTIONS).map((option) => option.flag));

/**
 * The words of a command line that are not options, after checking the options: each must be a known flag
 * with a non-empty value (`--port 9000` or `--port=9000`). A typo or a flag missing its value is an error rather than
 * a default silently kept (`--prot 9000` started on 8080; `--data-dir --port 9000` made a folder "--port").
 */
export function commandArguments(argv: string[]): string[] {
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    if (!word.startsWith("-")) {
      positionals.push(word);
      continue;
    }
    const flag = word.split("=", 1)[0];
    if (!FLAGS.has(flag)) throw new ConfigError(`unknown option "${flag}" (quarry --help lists them)`);
    // An empty value (--workers "" or --workers=) would otherwise stand for the default, over the variable's value.
    if (word.includes("=")) {
      if (word.length === flag.length + 1) throw new ConfigError(`${flag} needs a value`);
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined || value === "" || value.startsWith("--")) throw new ConfigError(`${flag} needs a value`);
    i++;
  }
  return positionals;
}

/** A flag's value; given more than once, the last one wins, as in most command lines. */
function flagValue(argv: string[], flag: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === flag) value = argv[i + 1];
    else if (argv[i].startsWith(`${flag}=`)) value = argv[i].slice(flag.length + 1);
  }
  return value;
}

/** Digits only ("1e4", "0x10", "1.0" and " 8" are refused), from `min` to `max`. */
function wholeNumber(name: string, raw: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(raw);
  if (!/^[0-9]+$/.test(raw) || n < min || n > max) {
    const unbounded = max === Number.MAX_SAFE_INTEGER;
    const range = !unbounded ? `from ${min} to ${max}` : /^[0-9]+$/.test(raw) && n > max ? `of at most ${max}` : `${min} or more`;
    throw new ConfigError(`${name} must be a whole number ${range}, got "${raw}"`);
  }
  return n;
}

function positiveInt(name: string, raw: string, max?: number): number {
  return wholeNumber(name, raw, 1, max);
}

/** More ingestion workers than this would only queue parser processes of up to QUARRY_PARSE_MEMORY_MB each. */
const MAX_WORKERS = 64;
/**
 * Ten minutes. Timers take at most 2^31-1 ms: past that Bun fired the deadline at once (with a
 * TimeoutOverflowWarning on every search), so every rerank was abandoned.
 */
const MAX_RERANK_TIMEOUT_MS = 600_000;

export function loadConfig(env: Record<string, string | undefined> = process.env, argv: string[] = []): Config {
  const get = (key: keyof typeof OPTIONS) => {
    const value = flagValue(argv, OPTIONS[key].flag) ?? env[OPTIONS[key].env];
    return value === undefined || value === "" ? undefined : value;
  };
  /** How the value was given, for its error: the flag when there is one, else the variable. */
  const named = (key: keyof typeof OPTIONS) => (flagValue(argv, OPTIONS[key].flag) !== undefined ? OPTIONS[key].flag : OPTIONS[key].env);
  const limits = (get("limits") ?? OPTIONS.limits.value).toLowerCase();
  if (!["on", "off"].includes(limits)) throw new ConfigError(`${named("limits")} must be "on" or "off", got "${limits}"`);
  const jwtSecret = get("jwtSecret") ?? null;
  if (jwtSecret !== null && Buffer.byteLength(jwtSecret) < MIN_JWT_SECRET_BYTES) {
    throw new ConfigError(
      `${named("jwtSecret")} must be at least ${MIN_JWT_SECRET_BYTES} bytes, got ${Buffer.byteLength(jwtSecret)} (generate one with: openssl rand -base64 48), or leave it unset to use a generated one kept in the data directory`,
    );
  }
  const trustProxy = (get("trustProxy") ?? OPTIONS.trustProxy.value).toLowerCase();
  if (!["on", "off"].includes(trustProxy)) throw new ConfigError(`${named("trustProxy")} must be "on" or "off", got "${trustProxy}"`);
  const webhookSecret = get("webhookSecret") ?? null;
  if (webhookSecret && !webhookSecret.startsWith("whsec_")) {
    throw new ConfigError(`${named("webhookSecret")} must be a Standard Webhooks secret starting with "whsec_"`);
  }
  if (webhookSecret) {
    try {
      new Webhook(webhookSecret); // its own check of the key
    } catch {
      const key = webhookSecret.slice("whsec_".length);
      throw new ConfigError(`${named("webhookSecret")} is not a valid Standard Webhooks secret: ${key === "" ? 'it has no key after "whsec_"' : 'what follows "whsec_" must be base64'}`);
    }
  }
  const metricsToken = get("metricsToken") ?? null;
  // Printable ASCII without spaces: it travels in an Authorization header.
  if (metricsToken !== null && (metricsToken.length < MIN_METRICS_TOKEN_LENGTH || !/^[\x21-\x7e]+$/.test(metricsToken))) {
    throw new ConfigError(
      `${named("metricsToken")} must be at least ${MIN_METRICS_TOKEN_LENGTH} printable ASCII characters without spaces (generate one with: openssl rand -hex 24), or leave it unset to serve no metrics`,
    );
  }
  return {
    port: wholeNumber(named("port"), get("port") ?? OPTIONS.port.value, 0, 65535),
    host: get("host") ?? OPTIONS.host.value,
    dataDir: resolve(get("dataDir") ?? OPTIONS.dataDir.value),
    jwtSecret,
    webhookSecret,
    modelsDir: resolve(get("modelsDir") ?? OPTIONS.modelsDir.value),
    embedModel: get("embedModel") ?? OPTIONS.embedModel.value,
    rerankModel: get("rerankModel") ?? null,
    rerankTimeoutMs: positiveInt(named("rerankTimeoutMs"), get("rerankTimeoutMs") ?? OPTIONS.rerankTimeoutMs.value, MAX_RERANK_TIMEOUT_MS),
    workers: positiveInt(named("workers"), get("workers") ?? String(Math.min(cpuCount(), MAX_WORKERS)), MAX_WORKERS),
    limitsEnabled: limits === "on",
    parseMemoryMb: wholeNumber(named("parseMemoryMb"), get("parseMemoryMb") ?? OPTIONS.parseMemoryMb.value, MIN_PARSE_MEMORY_MB),
    trustProxy: trustProxy === "on",
    indexMemoryMb: positiveInt(named("indexMemoryMb"), get("indexMemoryMb") ?? OPTIONS.indexMemoryMb.value),
    segmentMinChanges: positiveInt(named("segmentMinChanges"), get("segmentMinChanges") ?? OPTIONS.segmentMinChanges.value),
    queryCacheEntries: wholeNumber(named("queryCacheEntries"), get("queryCacheEntries") ?? OPTIONS.queryCacheEntries.value),
    metricsToken,
  };
}
