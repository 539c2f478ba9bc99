// Categories aimed at the request around the body: credentials, ids in paths, query strings, content
// types, traversal in the URL, and the payment webhook.
import { Webhook } from "standardwebhooks";
import type { CaseSpec, Credential, FuzzRequest, LiveIds } from "../case.ts";
import type { Category } from "./context.ts";
import { API_KEY, NO_AUTH, jsonRequest, paths } from "./common.ts";
import { MULTIPART_TYPE, multipart } from "../multipart.ts";

/** The webhook secret the harness starts the server with, so signed deliveries can be sent. */
export const WEBHOOK_SECRET = "whsec_" + Buffer.from("quarry-fuzz-webhook-secret-32byt").toString("base64");

/** /v1 requests that need a credential; the harness fills in ids. */
const PROTECTED: { label: string; build: (ids: LiveIds, credential: Credential) => FuzzRequest }[] = [
  { label: "list kbs", build: (_, c) => ({ method: "GET", path: paths.kbs, credential: c }) },
  { label: "create kb", build: (_, c) => jsonRequest("POST", paths.kbs, '{"name":"x"}', c) },
  { label: "search", build: (ids, c) => jsonRequest("POST", paths.search(ids), '{"query":"x"}', c) },
  { label: "get document", build: (ids, c) => ({ method: "GET", path: paths.doc(ids), credential: c }) },
  { label: "usage", build: (_, c) => ({ method: "GET", path: "/api/v1/usage", credential: c }) },
  { label: "regenerate key", build: (_, c) => ({ method: "POST", path: "/api/auth/api-key/regenerate", credential: c }) },
];

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

const FAKE_JWT_PAYLOAD = { sub: "acc_000000000000000000000000", exp: 4_102_444_800, iat: 1_700_000_000 };

const BAD_AUTHORIZATION: [name: string, value: string | undefined][] = [
  ["missing", undefined],
  ["empty", ""],
  ["scheme only", "Bearer"],
  ["scheme and space", "Bearer "],
  ["Basic credentials", "Basic dXNlcjpwYXNzd29yZA=="],
  ["unknown key", "Bearer qk_live_0000000000000000000000000000000000000000"],
  ["SQL in key", "Bearer qk_' OR '1'='1' --"],
  ["alg none JWT", `Bearer ${base64url({ alg: "none", typ: "JWT" })}.${base64url(FAKE_JWT_PAYLOAD)}.`],
  ["JWT signed with another key", `Bearer ${base64url({ alg: "HS256", typ: "JWT" })}.${base64url(FAKE_JWT_PAYLOAD)}.c2lnbmF0dXJlLW5vdC12YWxpZA`],
  ["JWT with 3 empty parts", "Bearer .."],
  ["8 KB token", `Bearer ${"A".repeat(8 * 1024)}`],
  ["60 KB token", `Bearer ${"A".repeat(60 * 1024)}`],
  ["UTF-8 bytes in token", "Bearer \u00c3\u00a9\u00e2\u0082\u00ac"], // written as latin1 bytes: the UTF-8 of "é€"
  ["tab-separated", "Bearer\tqk_x"],
  ["double scheme", "Bearer Bearer qk_x"],
  ["lower-case scheme, garbage", "bearer zzz"],
];

const auth: Category = {
  name: "auth",
  weight: 6,
  generate({ rng }) {
    const target = rng.pick(PROTECTED);
    if (rng.next() < 0.2) {
      // a large body without a credential must be refused without being read first
      const megabytes = rng.pick([5, 20, 45]);
      const asUpload = rng.next() < 0.5;
      return {
        name: `${asUpload ? "upload" : "create kb"}: no credential, ${megabytes} MB body`,
        expect: "reject",
        build: (ids) =>
          asUpload
            ? { method: "POST", path: paths.docs(ids), credential: NO_AUTH, headers: { "Content-Type": MULTIPART_TYPE }, body: multipart([{ name: "file", filename: "big.txt", data: new Uint8Array(megabytes << 20).fill(97) }]) }
            : jsonRequest("POST", paths.kbs, `{"name":"${"x".repeat(megabytes << 20)}"}`, NO_AUTH),
      };
    }
    if (rng.next() < 0.1 && target.label !== "regenerate key") {
      // the dashboard JWT where an API key is expected: which /v1 endpoints take it is left open by the spec
      return { name: `${target.label}: the attacker's JWT instead of the API key`, expect: "any", build: (ids) => target.build(ids, { kind: "jwt" }) };
    }
    const [name, value] = rng.pick(BAD_AUTHORIZATION);
    const credential: Credential = value === undefined ? NO_AUTH : { kind: "raw", value };
    return { name: `${target.label}: ${name} Authorization`, expect: "reject", build: (ids) => target.build(ids, credential) };
  },
};

const BAD_IDS = [
  "kb_", `kb_${"a".repeat(10_000)}`, "KB_abc", "doc_abc", "kb_' OR '1'='1", "kb_%00", "kb_%2e%2e%2fkb_x", "kb_%F0%9F%A6%80",
  "kb_0000000000000000000000000", "12345", "kb_abc%20OR%201=1", "%ZZ", "kb_abc;DROP TABLE kbs",
];
const BAD_DOC_IDS = ["doc_", "doc_' OR 1=1 --", `doc_${"b".repeat(5000)}`, "kb_abc", "doc_%00", "doc_../../etc", "doc_0000000000000000000000000"];

/** Spaces would break the request line; a client percent-encodes them. */
const inPath = (id: string) => id.replaceAll(" ", "%20");

const badIds: Category = {
  name: "bad-ids",
  weight: 6,
  generate({ rng }) {
    const choice = rng.int(0, 4);
    if (choice === 0) {
      const id = inPath(rng.pick(BAD_IDS));
      const method = rng.pick(["GET", "PATCH", "DELETE"]);
      return {
        name: `${method} kb ${id.length > 40 ? id.slice(0, 20) + "…" : id}`,
        expect: "reject",
        build: () => (method === "PATCH" ? jsonRequest(method, `${paths.kbs}/${id}`, '{"name":"x"}') : { method, path: `${paths.kbs}/${id}`, credential: API_KEY }),
      };
    }
    if (choice === 1) {
      const id = inPath(rng.pick(BAD_DOC_IDS));
      const method = rng.pick(["GET", "DELETE"]);
      return { name: `${method} document ${id.slice(0, 40)}`, expect: "reject", build: (ids) => ({ method, path: `${paths.docs(ids)}/${id}`, credential: API_KEY }) };
    }
    if (choice === 2) {
      // the unrelated tenant's resources: another account's ids must be indistinguishable from missing ones
      const method = rng.pick(["GET", "PATCH", "DELETE", "POST search", "GET documents"]);
      return {
        name: `${method} on the other tenant's knowledge base`,
        expect: "reject",
        build: (ids) => {
          const kb = `${paths.kbs}/${ids.otherKbId}`;
          if (method === "PATCH") return jsonRequest("PATCH", kb, '{"name":"stolen"}');
          if (method === "POST search") return jsonRequest("POST", `${kb}/search`, '{"query":"secret"}');
          if (method === "GET documents") return { method: "GET", path: `${kb}/documents`, credential: API_KEY };
          return { method, path: kb, credential: API_KEY };
        },
      };
    }
    if (choice === 3) {
      const method = rng.pick(["GET", "DELETE", "GET chunks"]);
      return {
        name: `${method} the other tenant's document under the attacker's knowledge base`,
        expect: "reject",
        build: (ids) => ({
          method: method === "DELETE" ? "DELETE" : "GET",
          path: `${paths.docs(ids)}/${ids.otherDocId}${method === "GET chunks" ? "/chunks" : ""}`,
          credential: API_KEY,
        }),
      };
    }
    const id = inPath(rng.pick(["req_x", "req_' OR 1=1", `req_${"c".repeat(300)}`, "%00", "req_%F0%9F%A6%80"]));
    return { name: `GET request log entry ${id.slice(0, 30)}`, expect: "reject", build: () => ({ method: "GET", path: `/api/v1/requests/${id}`, credential: API_KEY }) };
  },
};

const QUERY_CASES: [name: string, path: (ids: LiveIds) => string, expect: CaseSpec["expect"]][] = [
  ["garbage cursor", (ids) => `${paths.docs(ids)}?cursor=!!!%25%25`, "any"],
  ["base64 JSON cursor with SQL", () => `${paths.kbs}?cursor=${Buffer.from('{"id":"\' OR 1=1 --","created_at":"x"}').toString("base64url")}`, "any"],
  ["100 KB cursor", () => `${paths.kbs}?cursor=${"Q".repeat(100_000)}`, "any"],
  ["negative chunk cursor", (ids) => `${paths.chunks(ids)}?cursor=-5`, "any"],
  ["huge chunk cursor", (ids) => `${paths.chunks(ids)}?cursor=99999999999999999999999`, "any"],
  ["cursor from another list", (ids) => `${paths.chunks(ids)}?cursor=${Buffer.from("kb_zzz").toString("base64url")}`, "any"],
  ["repeated cursor and limit", () => `${paths.kbs}?cursor=a&cursor=b&limit=1&limit=2`, "any"],
  ["status=bogus", (ids) => `${paths.docs(ids)}?status=bogus`, "reject"],
  ["status=READY", (ids) => `${paths.docs(ids)}?status=READY`, "any"],
  ["status as array syntax", (ids) => `${paths.docs(ids)}?status[]=ready`, "any"],
  ["requests method=FOO", () => "/api/v1/requests?method=FOO", "reject"],
  ["requests status=6xx", () => "/api/v1/requests?status=6xx", "reject"],
  ["requests status_code=99999", () => "/api/v1/requests?status_code=99999", "reject"],
  ["requests status_code=abc", () => "/api/v1/requests?status_code=abc", "reject"],
  ["requests from=not-a-date", () => "/api/v1/requests?from=not-a-date", "reject"],
  ["requests from=9999-99-99", () => "/api/v1/requests?from=9999-99-99", "reject"],
  ["requests to=0000-01-01", () => "/api/v1/requests?to=0000-01-01", "any"],
  ["requests from after to", () => "/api/v1/requests?from=2030-01-01&to=2000-01-01", "any"],
  ["requests path of 10 KB", () => `/api/v1/requests?path=${"p".repeat(10_000)}`, "reject"],
  ["requests kb_id=bad", () => "/api/v1/requests?kb_id=bad", "reject"],
  ["requests auth_type=admin", () => "/api/v1/requests?auth_type=admin", "reject"],
  ["requests path with SQL wildcards", () => "/api/v1/requests?path=%25_%25%27", "any"],
  ["unknown parameters", () => `${paths.kbs}?admin=true&__proto__[x]=1&constructor=1`, "any"],
  ["broken percent encoding", () => `${paths.kbs}?cursor=%E0%A4%A&limit=%`, "any"],
  ["query string of 60 KB", () => `${paths.kbs}?x=${"y".repeat(60_000)}`, "any"],
];

const queryParams: Category = {
  name: "query-params",
  weight: 5,
  generate({ rng }) {
    const [name, path, expect] = rng.pick(QUERY_CASES);
    return { name, expect, build: (ids) => ({ method: "GET", path: path(ids), credential: API_KEY }) };
  },
};

const JSON_TARGETS = [
  { label: "create kb", path: () => paths.kbs, body: '{"name":"ct"}', method: "POST" },
  { label: "search", path: paths.search, body: '{"query":"ct"}', method: "POST" },
  { label: "text", path: paths.text, body: '{"text":"content type test"}', method: "POST" },
  { label: "patch document", path: paths.doc, body: '{"metadata":{"a":1}}', method: "PATCH" },
];

const CONTENT_TYPES: [type: string | undefined, body: (json: string) => string | Uint8Array, expect: CaseSpec["expect"]][] = [
  ["text/plain", (j) => j, "reject"],
  ["application/x-www-form-urlencoded", () => "name=x&query=y&text=z", "reject"],
  [MULTIPART_TYPE, () => multipart([{ name: "name", data: "x" }, { name: "query", data: "y" }, { name: "text", data: "z" }]), "reject"],
  ["application/xml", () => "<name>x</name>", "reject"],
  [undefined, (j) => j, "any"],
  ["application/json; charset=utf-16le", (j) => Buffer.from(j, "utf16le"), "any"],
  ["application/json; charset=latin1", (j) => Buffer.from(j.replace('"}', 'é"}'), "latin1"), "any"],
  ["APPLICATION/JSON", (j) => j, "any"],
  ["application/json;;;;", (j) => j, "any"],
  ["application/vnd.api+json", (j) => j, "any"],
  [`application/json; ${"x=y; ".repeat(1000)}`, (j) => j, "any"],
  ["application/json\u0000text/html", (j) => j, "any"],
  ["image/png", () => new Uint8Array([0x89, 0x50, 0x4e, 0x47]), "reject"],
];

const contentType: Category = {
  name: "content-type",
  weight: 4,
  generate({ rng }): CaseSpec {
    if (rng.next() < 0.25) {
      // the upload endpoint given a non-multipart body
      const [type, body] = rng.pick([
        ["application/json", '{"file":"aGVsbG8=","name":"x.txt"}'],
        ["text/plain", "just text"],
        ["application/x-www-form-urlencoded", "file=hello.txt"],
        ["application/octet-stream", "raw bytes"],
      ] as const);
      return { name: `upload with ${type}`, expect: "reject", build: (ids) => jsonRequest("POST", paths.docs(ids), body, API_KEY, type) };
    }
    const target = rng.pick(JSON_TARGETS);
    const [type, body, expect] = rng.pick(CONTENT_TYPES);
    return {
      name: `${target.label} with content type ${type === undefined ? "(none)" : type.slice(0, 50)}`,
      expect,
      createsDocument: target.label === "text",
      build: (ids) => ({ method: target.method, path: target.path(ids), body: body(target.body), credential: API_KEY, headers: type === undefined ? [] : [["Content-Type", type]] }),
    };
  },
};

const TRAVERSAL_PATHS: [path: string, expect: CaseSpec["expect"]][] = [
  ["/api/v1/knowledge-bases/..%2f..%2f..%2fetc%2fpasswd", "reject"],
  ["/api/v1/knowledge-bases/%2e%2e/%2e%2e/etc/passwd", "any"],
  ["/api/v1/knowledge-bases/kb_x/documents/..%2F..%2F..%2Fjwt-secret", "reject"],
  ["/api/v1/../../../../etc/passwd", "any"],
  ["/api/%2e%2e/%2e%2e/quarry.db", "any"],
  ["/api/v1/knowledge-bases/%252e%252e%252f", "reject"],
  ["/api/v1/knowledge-bases/..\\..\\windows\\win.ini", "reject"],
  ["/api/v1//knowledge-bases//", "any"],
  ["/api/v1/knowledge-bases/%00", "reject"],
  ["/../../data/quarry.db", "any"],
  ["/api/docs/../../../etc/passwd", "any"],
  ["/api/v1/knowledge-bases/%C0%AE%C0%AE%C0%AF", "reject"],
  ["/api/v1/knowledge-bases/kb_x/documents/doc_x/chunks/../../../../../..", "any"],
  ["*", "any"],
  ["/api/v1/knowledge-bases?limit=1#fragment", "any"],
  [`/api/v1/${"a/".repeat(2000)}`, "reject"],
];

const traversalPaths: Category = {
  name: "traversal-paths",
  weight: 3,
  generate({ rng }) {
    const [path, expect] = rng.pick(TRAVERSAL_PATHS);
    const method = rng.pick(["GET", "DELETE"]);
    return { name: `${method} ${path.slice(0, 70)}`, expect: method === "DELETE" && expect === "any" ? "any" : expect, build: () => ({ method, path, credential: API_KEY }) };
  },
};

const signer = new Webhook(WEBHOOK_SECRET);
const WEBHOOK_BODIES: [name: string, body: string][] = [
  ["malformed JSON", '{"event":'],
  ["event of wrong type", '{"event":42,"data":[]}'],
  ["data of wrong type", '{"event":"subscription.active","data":"x"}'],
  ["unknown event", '{"event":"subscription.exploded","data":{}}'],
  ["product for an unknown customer", '{"event":"subscription.active","data":{"customer_id":"cus_nobody","product_id":"prod_scale","status":"active"}}'],
  ["deeply nested data", `{"event":"subscription.active","data":${'{"a":'.repeat(5000)}1${"}".repeat(5000)}}`],
  ["1 MB event name", `{"event":"${"e".repeat(1 << 20)}"}`],
  ["top-level array", "[1,2,3]"],
];

const webhook: Category = {
  name: "webhook",
  weight: 3,
  generate({ rng, unique }) {
    const [bodyName, body] = rng.pick(WEBHOOK_BODIES);
    const signing = rng.pick(["signed", "unsigned", "bad signature", "stale timestamp", "huge webhook-id"]);
    const id = `msg_${unique}`;
    const now = new Date();
    let headers: Record<string, string> = {};
    if (signing === "signed") headers = { "webhook-id": id, "webhook-timestamp": String(Math.floor(now.getTime() / 1000)), "webhook-signature": signer.sign(id, now, body) };
    if (signing === "bad signature") headers = { "webhook-id": id, "webhook-timestamp": String(Math.floor(now.getTime() / 1000)), "webhook-signature": "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" };
    if (signing === "stale timestamp") {
      const old = new Date(now.getTime() - 86_400_000);
      headers = { "webhook-id": id, "webhook-timestamp": String(Math.floor(old.getTime() / 1000)), "webhook-signature": signer.sign(id, old, body) };
    }
    if (signing === "huge webhook-id") headers = { "webhook-id": "w".repeat(30_000), "webhook-timestamp": "abc", "webhook-signature": "v1,x" };
    // a correctly signed delivery of well-formed JSON with the right field types may be accepted (unknown
    // events, customers and extra fields included); everything else must be refused
    const acceptable = signing === "signed" && !["malformed JSON", "event of wrong type", "data of wrong type", "top-level array"].includes(bodyName);
    return {
      name: `${signing} delivery, ${bodyName}`,
      expect: acceptable ? "any" : "reject",
      build: () => ({ method: "POST", path: "/api/webhooks/payments", body, credential: NO_AUTH, headers: { "Content-Type": "application/json", ...headers } }),
    };
  },
};

export const REQUEST_CATEGORIES = [auth, badIds, queryParams, contentType, traversalPaths, webhook];
