// Categories aimed at JSON bodies: malformed JSON, wrong types per field, odd numbers, unicode, deep
// nesting, and huge filters and metadata.
import type { CaseSpec } from "../case.ts";
import type { Category } from "./context.ts";
import { JSON_ENDPOINTS, ODD_VALUES, jsonRequest, paths, withRawField, type JsonEndpoint } from "./common.ts";
import type { Rng } from "../rng.ts";

function endpointCase(endpoint: JsonEndpoint, name: string, body: string | Uint8Array, expect: CaseSpec["expect"]): CaseSpec {
  return {
    name: `${endpoint.label}: ${name}`,
    expect,
    createsDocument: endpoint.creates === "document",
    build: (ids) => jsonRequest(endpoint.method, endpoint.path(ids), body, endpoint.credential),
  };
}

const MALFORMED: [name: string, body: (valid: string, rng: Rng) => string | Uint8Array, expect: CaseSpec["expect"]][] = [
  ["unclosed object", () => "{", "reject"],
  ["missing value", () => '{"name":}', "reject"],
  ["single quotes", () => "{'name':'x'}", "reject"],
  ["trailing comma", (v) => v.slice(0, -1) + ",}", "reject"],
  ["top-level array", () => "[1,2,3]", "reject"],
  ["top-level null", () => "null", "reject"],
  ["top-level number", () => "42", "reject"],
  ["top-level string", () => '"hello"', "reject"],
  ["NaN literal", () => '{"name":NaN,"query":NaN,"text":NaN,"metadata":NaN}', "reject"],
  ["Infinity literal", () => '{"top_k":Infinity,"name":Infinity}', "reject"],
  ["garbage after object", (v) => v + "garbage", "reject"],
  ["two objects", (v) => v + v, "reject"],
  ["comment", (v) => v.slice(0, -1) + "/* comment */}", "reject"],
  ["truncated", (v, rng) => v.slice(0, rng.int(1, v.length - 1)), "reject"],
  ["random bytes", (_, rng) => rng.bytes(rng.int(1, 4096)), "reject"],
  ["raw control characters in a string", () => '{"name":"a\u0001\u0002\u0000b","query":"a\u0000","text":"\u0007"}', "reject"],
  ["invalid escape", () => '{"name":"\\x41","query":"\\q"}', "reject"],
  ["1 MB of whitespace then a truncated object", () => " ".repeat(1 << 20) + "{", "reject"],
  ["byte order mark", (v) => "\uFEFF" + v, "any"],
  ["duplicate keys", (v) => v.slice(0, -1) + `,${v.slice(1)}`, "any"],
  ["escaped lone surrogate", (v) => v.replace(/"fuzz[^"]*"/, '"\\ud800"'), "any"],
];

const malformedJson: Category = {
  name: "malformed-json",
  weight: 5,
  generate({ rng, unique }) {
    const endpoint = rng.pick(JSON_ENDPOINTS);
    const [name, body, expect] = rng.pick(MALFORMED);
    return endpointCase(endpoint, name, body(JSON.stringify(endpoint.base(unique)), rng), expect);
  },
};

/** Every field of every JSON endpoint, in turn: a run of enough cases gives each field a wrong value. */
const FIELDS = JSON_ENDPOINTS.flatMap((endpoint) => Object.keys(endpoint.fields).map((field) => ({ endpoint, field })));

const wrongTypes: Category = {
  name: "wrong-types",
  weight: 8,
  generate({ rng, unique, occurrence }) {
    const { endpoint, field } = FIELDS[occurrence % FIELDS.length];
    const raw = rng.pick(ODD_VALUES);
    const valid = endpoint.fields[field](JSON.parse(raw));
    const shown = raw.length > 40 ? `${raw.slice(0, 20)}…(${raw.length} chars)` : raw;
    return endpointCase(endpoint, `${field} = ${shown}`, withRawField(endpoint.base(unique), field, raw), valid === false ? "reject" : "any");
  },
};

/** Numbers in bodies and query strings: huge, negative, fractional, NaN-like text. */
const NUMBER_TEXT = ["0", "-1", "1.5", "1e3", "1e999", "99999999999999999999", "NaN", "Infinity", "-Infinity", "abc", "", "%00", "0x10", "%205", "5abc", "1_000", "+7", "-0", "2e-5", "٣"];
const LIST_PATHS = [
  { label: "list kbs", path: () => paths.kbs },
  { label: "list documents", path: paths.docs },
  { label: "list chunks", path: paths.chunks },
  { label: "list requests", path: () => "/api/v1/requests" },
];

function coercedLimitIsValid(text: string): boolean | undefined {
  const n = Number(decodeURIComponent(text.replace(/%(?![0-9a-f]{2})/gi, "%25")));
  if (!Number.isInteger(n) || n < 1) return text === "" ? undefined : false; // an empty limit may mean "default"
  return undefined; // the maximum page size is not in the spec
}

const numbers: Category = {
  name: "numbers",
  weight: 5,
  generate({ rng }) {
    if (rng.next() < 0.5) {
      const list = rng.pick(LIST_PATHS);
      const text = rng.pick(NUMBER_TEXT);
      return {
        name: `${list.label}: limit=${text}`,
        expect: coercedLimitIsValid(text) === false ? "reject" : "any",
        build: (ids) => ({ method: "GET", path: `${list.path(ids)}?limit=${text}`, credential: { kind: "api-key" } }),
      };
    }
    const search = JSON_ENDPOINTS.find((e) => e.label === "search")!;
    const field = rng.pick(["top_k", "alpha", "score_threshold"]);
    const raw = rng.pick(["0", "-1", "1.5", "51", "1e308", "-1e308", "1e999", "9007199254740993", "-0", "0.1e-400", "1E2", "5.0", "1.0000000000000002", "4.9999999999999999", '"5"', '"NaN"']);
    const valid = search.fields[field](JSON.parse(raw));
    return endpointCase(search, `${field} = ${raw}`, withRawField(search.base(""), field, raw), valid === false ? "reject" : "any");
  },
};

const UNICODE_STRINGS: [name: string, value: string][] = [
  ["right-to-left override", "\u202Etxt.exe\u202C report"],
  ["zero-width characters", "a\u200B\u200C\u200D\uFEFFb"],
  ["emoji with ZWJ", "👨‍👩‍👧‍👦🏳️‍🌈🦀"],
  ["combining marks", "Z" + "\u0336\u0337\u0338".repeat(500)],
  ["NUL character", "before\u0000after"],
  ["non-characters", "\uFFFE\uFFFF\uFDD0"],
  ["astral plane", "𝔮𝔲𝔞𝔯𝔯𝔶 𠀀"],
  ["mixed scripts", "Ελληνικά русский 中文 العربية עברית"],
  ["escaped lone surrogates", "\\ud800 \\udc00"], // written as JSON escapes below
];

/** Invalid UTF-8 byte sequences: lone surrogates (CESU), overlong NUL, bytes that never occur in UTF-8. */
const RAW_BYTES: [name: string, bytes: number[]][] = [
  ["lone high surrogate bytes", [0xed, 0xa0, 0x80]],
  ["lone low surrogate bytes", [0xed, 0xb0, 0x80]],
  ["overlong NUL", [0xc0, 0x80]],
  ["0xFF byte", [0xff, 0xfe]],
  ["truncated sequence", [0xe2, 0x82]],
];

/** JSON text with every \u0001 placeholder replaced by raw bytes. */
function withRawBytes(text: string, bytes: number[]): Uint8Array {
  const pieces = text.split("\u0001").map((piece) => Buffer.from(piece, "utf8"));
  return Buffer.concat(pieces.flatMap((piece, i) => (i === 0 ? [piece] : [Buffer.from(bytes), piece])));
}

const unicode: Category = {
  name: "unicode",
  weight: 6,
  generate({ rng, unique }) {
    const endpoint = rng.pick(JSON_ENDPOINTS.filter((e) => e.label !== "signup"));
    const field = rng.pick(Object.keys(endpoint.fields).filter((f) => ["name", "query", "text", "keyword_query", "description", "metadata", "email", "password"].includes(f)));
    if (rng.next() < 0.4) {
      const [name, bytes] = rng.pick(RAW_BYTES);
      const text = withRawField(endpoint.base(unique), field, field === "metadata" ? '{"k\u0001":"\u0001"}' : '"x\u0001y"');
      return endpointCase(endpoint, `${field} with ${name}`, withRawBytes(text, bytes), "any");
    }
    const [name, value] = rng.pick(UNICODE_STRINGS);
    const raw = name.startsWith("escaped") ? `"${value}"` : JSON.stringify(value);
    const json = field === "metadata" ? `{${raw}:${raw}}` : raw;
    return endpointCase(endpoint, `${field} with ${name}`, withRawField(endpoint.base(unique), field, json), "any");
  },
};

function nested(depth: number, kind: "object" | "array"): string {
  return kind === "object" ? '{"a":'.repeat(depth) + "1" + "}".repeat(depth) : "[".repeat(depth) + "]".repeat(depth);
}

const deepNesting: Category = {
  name: "deep-nesting",
  weight: 5,
  generate({ rng, unique }) {
    const depth = rng.pick([1_000, 10_000, 100_000]);
    const kind = rng.pick(["object", "array"] as const);
    const endpoint = rng.pick(JSON_ENDPOINTS);
    const where = rng.pick(["whole body", "metadata", "filter", "first field"]);
    if (where === "whole body") return endpointCase(endpoint, `whole body ${kind} ${depth} deep`, nested(depth, kind), "reject");
    const field =
      where === "metadata" && "metadata" in endpoint.fields ? "metadata" : where === "filter" && "filter" in endpoint.fields ? "filter" : Object.keys(endpoint.fields)[0];
    const raw = field === "metadata" || field === "filter" ? `{"key":${nested(depth, kind)}}` : nested(depth, kind);
    // metadata is free-form JSON: the spec allows depth, a documented bound may reject it
    return endpointCase(endpoint, `${field} ${kind} ${depth} deep`, withRawField(endpoint.base(unique), field, raw), field === "metadata" ? "any" : "reject");
  },
};

function manyKeys(count: number, value: (i: number) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) out[`key_${i}`] = value(i);
  return out;
}

const HUGE: [name: string, target: "filter" | "metadata", make: () => unknown, expect: CaseSpec["expect"]][] = [
  ["filter with 10k keys", "filter", () => manyKeys(10_000, (i) => ({ $eq: i })), "any"],
  ["filter $in with 100k values", "filter", () => ({ year: { $in: Array.from({ length: 100_000 }, (_, i) => i) } }), "any"],
  ["filter of 140 KB ($nin strings)", "filter", () => ({ tag: { $nin: Array.from({ length: 7_000 }, (_, i) => `value-${i}-xxxxxxx`) } }), "any"],
  ["filter key of 100 KB", "filter", () => ({ ["k".repeat(100_000)]: { $eq: 1 } }), "any"],
  ["filter with unknown operator $where", "filter", () => ({ year: { $where: "sleep(1000)" } }), "reject"],
  ["filter with $regex", "filter", () => ({ name: { $regex: "(a+)+$" } }), "reject"],
  ["filter with $or at the top", "filter", () => ({ $or: [{ a: { $eq: 1 } }, { b: { $eq: 2 } }] }), "reject"],
  ["filter with bare values", "filter", () => ({ year: 2024, tags: ["a"] }), "any"],
  ["filter with two operators per key", "filter", () => ({ year: { $gt: 1, $lt: "x", $in: "notarray" } }), "reject"],
  ["filter $in not an array", "filter", () => ({ year: { $in: 5 } }), "reject"],
  ["filter with __proto__ key", "filter", () => JSON.parse('{"__proto__":{"$eq":1},"constructor":{"$ne":null}}'), "any"],
  ["metadata with 10k keys", "metadata", () => manyKeys(10_000, (i) => i), "any"],
  ["metadata string of 1 MB", "metadata", () => ({ blob: "m".repeat(1 << 20) }), "any"],
  ["metadata key of 100 KB", "metadata", () => ({ ["k".repeat(100_000)]: 1 }), "any"],
  ["metadata array of 200k numbers", "metadata", () => ({ list: Array.from({ length: 200_000 }, (_, i) => i) }), "any"],
  ["metadata with __proto__ and constructor", "metadata", () => JSON.parse('{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"x":1}}}'), "any"],
];

const hugeFilterMetadata: Category = {
  name: "huge-filter-metadata",
  weight: 6,
  generate({ rng, unique }) {
    const [name, target, make, expect] = rng.pick(HUGE);
    const endpoint = rng.pick(JSON_ENDPOINTS.filter((e) => target in e.fields));
    const body = JSON.stringify({ ...endpoint.base(unique), [target]: make() });
    return endpointCase(endpoint, name, body, expect);
  },
};

export const JSON_BODY_CATEGORIES = [malformedJson, wrongTypes, numbers, unicode, deepNesting, hugeFilterMetadata];
