// Building blocks the generators share: paths of the API, JSON requests, and the JSON endpoints with a
// validity rule per field (so a wrong value knows whether the spec requires a rejection).
import type { Credential, FuzzRequest, LiveIds } from "../case.ts";

export const API_KEY: Credential = { kind: "api-key" };
export const NO_AUTH: Credential = { kind: "none" };

export const paths = {
  kbs: "/api/v1/knowledge-bases",
  kb: (ids: LiveIds) => `/api/v1/knowledge-bases/${ids.kbId}`,
  docs: (ids: LiveIds) => `/api/v1/knowledge-bases/${ids.kbId}/documents`,
  doc: (ids: LiveIds) => `/api/v1/knowledge-bases/${ids.kbId}/documents/${ids.docId}`,
  text: (ids: LiveIds) => `/api/v1/knowledge-bases/${ids.kbId}/documents/text`,
  chunks: (ids: LiveIds) => `/api/v1/knowledge-bases/${ids.kbId}/documents/${ids.docId}/chunks`,
  search: (ids: LiveIds) => `/api/v1/knowledge-bases/${ids.kbId}/search`,
};

export function jsonRequest(method: string, path: string, body: string | Uint8Array, credential: Credential = API_KEY, contentType = "application/json"): FuzzRequest {
  return { method, path, body, credential, headers: { "Content-Type": contentType } };
}

/** true: valid per the spec; false: the spec requires a rejection; undefined: the spec leaves it open. */
export type Rule = (value: unknown) => boolean | undefined;

const isObject = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v);

export const rules = {
  string: (min: number, max: number, nullable = false): Rule => (v) => {
    if (v === null) return nullable ? true : false;
    if (typeof v !== "string") return false;
    return v.length >= min && v.length <= max ? true : v.length === 0 ? undefined : false;
  },
  anyString: ((v) => (typeof v === "string" ? (v.length === 0 ? undefined : true) : false)) as Rule,
  nullableString: ((v) => (v === null || typeof v === "string" ? true : false)) as Rule,
  email: ((v) => (typeof v !== "string" ? false : /^[^@\s"<>]+@[a-z0-9-]+(\.[a-z0-9-]+)+$/i.test(v) && v.length <= 256 ? undefined : false)) as Rule,
  int: (min: number, max: number): Rule => (v) => typeof v === "number" && Number.isInteger(v) && v >= min && v <= max,
  number: (min: number, max: number, nullable = false): Rule => (v) =>
    v === null && nullable ? true : typeof v !== "number" || !Number.isFinite(v) ? false : v >= min && v <= max ? true : undefined,
  boolean: ((v) => typeof v === "boolean") as Rule,
  object: ((v) => (isObject(v) ? true : v === null ? undefined : false)) as Rule,
  oneOf: (values: readonly string[]): Rule => (v) => values.includes(v as string),
};

export interface JsonEndpoint {
  label: string;
  method: string;
  path: (ids: LiveIds) => string;
  credential: Credential;
  /** A valid body; `unique` makes values that must not repeat (emails) differ per case. */
  base: (unique: string) => Record<string, unknown>;
  fields: Record<string, Rule>;
  creates?: "document";
}

export const JSON_ENDPOINTS: JsonEndpoint[] = [
  {
    label: "signup",
    method: "POST",
    path: () => "/api/auth/signup",
    credential: NO_AUTH,
    base: (u) => ({ email: `fuzz-${u}@example.com`, password: "correct horse battery", name: "Fuzz" }),
    fields: { email: rules.email, password: rules.string(8, 128), name: rules.string(0, 256, true) },
  },
  {
    label: "login",
    method: "POST",
    path: () => "/api/auth/login",
    credential: NO_AUTH,
    base: (u) => ({ email: `nobody-${u}@example.com`, password: "correct horse battery" }),
    fields: { email: rules.string(0, 256), password: rules.string(0, 128) },
  },
  {
    label: "create-kb",
    method: "POST",
    path: () => paths.kbs,
    credential: API_KEY,
    base: () => ({ name: "fuzz kb", description: "made by the fuzzer", metadata: { team: "fuzz" } }),
    fields: { name: rules.string(1, 256), description: rules.string(0, 1024, true), metadata: rules.object },
  },
  {
    label: "patch-kb",
    method: "PATCH",
    path: paths.kb,
    credential: API_KEY,
    base: () => ({ name: "main kb", description: "patched", metadata: { team: "fuzz" } }),
    fields: { name: rules.string(1, 256), description: rules.string(0, 1024, true), metadata: rules.object },
  },
  {
    label: "text",
    method: "POST",
    path: paths.text,
    credential: API_KEY,
    base: () => ({ text: "Quarry fuzz text. Short and harmless.", name: "fuzz.txt", metadata: { source: "fuzz" } }),
    fields: { text: rules.string(1, 10_000_000), name: rules.string(1, 256), metadata: rules.object },
    creates: "document",
  },
  {
    label: "patch-document",
    method: "PATCH",
    path: paths.doc,
    credential: API_KEY,
    base: () => ({ metadata: { source: "fuzz", year: 2024 } }),
    fields: { metadata: rules.object },
  },
  {
    label: "search",
    method: "POST",
    path: paths.search,
    credential: API_KEY,
    base: () => ({ query: "what is quarry", top_k: 5, mode: "hybrid", alpha: 0.5, rerank: false, include_metadata: true }),
    fields: {
      query: rules.anyString,
      top_k: rules.int(1, 50),
      rerank: rules.boolean,
      filter: rules.object,
      // Absent or null: no threshold (the search route's documented choice; the spec names no default).
      score_threshold: rules.number(0, 1, true),
      include_metadata: rules.boolean,
      mode: rules.oneOf(["vector", "keyword", "hybrid"]),
      alpha: rules.number(0, 1),
      keyword_query: rules.nullableString,
    },
  },
];

/** Values of every JSON type and then some, as raw JSON text (so 1e999, -0 and 2^53+1 go out literally). */
export const ODD_VALUES: string[] = [
  "null", "true", "false", "0", "-1", "1.5", "-0", "1e308", "-1e308", "1e999", "9007199254740993",
  "123456789012345678901234567890", "0.1e-400", '"NaN"', '"Infinity"', '"-Infinity"', '"1e3"', '""', '" "',
  '"0x10"', '"١٢"', "[]", "[1]", "{}", '{"$gt":1}', `"${"a".repeat(100_000)}"`, '"\\u0000"', '"true"', '"null"',
  "[null]", '{"__proto__":{"polluted":1}}', `"${"x".repeat(300)}"`, '"<script>alert(1)</script>"', `"' OR 1=1 --"`,
  "50", "51", "0.5", "2", '"hybrid"', '"VECTOR"',
];

/** A body as JSON text with one field's value replaced by raw JSON text. */
export function withRawField(body: Record<string, unknown>, field: string, raw: string): string {
  const marker = "\u0001FUZZ\u0001";
  return JSON.stringify({ ...body, [field]: marker }).replace(JSON.stringify(marker), () => raw);
}

/** The most obvious path for a file upload, multipart or not. */
export function uploadRequest(ids: LiveIds, body: Uint8Array, contentType: string, credential: Credential = API_KEY, method = "POST"): FuzzRequest {
  return { method, path: method === "PUT" ? paths.doc(ids) : paths.docs(ids), body, credential, headers: { "Content-Type": contentType } };
}
