// The built-in dashboard: served outside /api without a credential, self-contained (no external URL),
// and its script is a JavaScript module the browser can run as served.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let origin: string;
beforeAll(async () => {
  server = await startTestServer();
  origin = server.server.url;
});
afterAll(() => server.stop());

const get = (path: string) => fetch(origin + path, { redirect: "manual" });

/** Every absolute URL in a text, except the SVG/XHTML namespaces no page here uses anyway. */
function externalUrls(text: string): string[] {
  return [...text.matchAll(/(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}[^\s"'`)]*/gi)].map((m) => m[0]);
}

describe("dashboard", () => {
  test("GET / redirects to /dashboard", async () => {
    const res = await get("/");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/dashboard");
  });

  test("GET /dashboard serves the page with every section, with no credential", async () => {
    const res = await get("/dashboard");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/html");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await res.text();
    for (const id of [
      "signin-form",
      "signup-form",
      "key-dialog",
      "view-knowledge-bases",
      "kb-create-form",
      "kb-items",
      "view-knowledge-base",
      "upload-form",
      "text-form",
      "doc-items",
      "view-document",
      "chunk-items",
      "search-form",
      "view-usage",
      "view-requests",
      "request-items",
      "view-account",
      "regenerate-key",
    ]) {
      expect(html).toContain(`id="${id}"`);
    }
    for (const field of ["query", "mode", "alpha", "top_k", "rerank", "filter", "score_threshold"]) {
      expect(html).toContain(`name="${field}"`);
    }
    expect(html).toContain('<script type="module" src="/dashboard/app.js"></script>');
    expect(html).toContain('<link rel="stylesheet" href="/dashboard/styles.css">');
  });

  test("the page, its stylesheet and its script reference no external URL", async () => {
    for (const path of ["/dashboard", "/dashboard/styles.css", "/dashboard/app.js"]) {
      const text = await (await get(path)).text();
      expect({ path, urls: externalUrls(text) }).toEqual({ path, urls: [] });
      expect(text).not.toMatch(/@import|url\(\s*["']?(?!data:)/);
    }
  });

  test("the script is served as a JavaScript module that parses and calls only /api", async () => {
    const res = await get("/dashboard/app.js");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/javascript/);
    const source = await res.text();
    expect(() => new Bun.Transpiler({ loader: "js" }).transformSync(source)).not.toThrow();
    expect(source).toContain("new URL(`/api${path}`, location.origin)");
    expect(source).toContain("authorization = `Bearer ${session.token()}`");
    expect(source).toContain("sessionStorage");
  });

  test("the stylesheet is served as CSS", async () => {
    const res = await get("/dashboard/styles.css");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/css");
  });

  test("the API keeps its paths and its 404 envelope next to the dashboard", async () => {
    const health = await server.request("GET", "/health");
    expect(health.status).toBe(200);
    const unknown = await server.request("GET", "/dashboard");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("NOT_FOUND");
    const openapi = await server.request("GET", "/openapi.json");
    expect(Object.keys(openapi.body.paths).every((path) => path.startsWith("/api/"))).toBe(true);
  });
});
