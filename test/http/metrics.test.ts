// GET /api/metrics: Prometheus text for a scraper holding QUARRY_METRICS_TOKEN, counting what the real app
// did (requests by route pattern, searches by mode, documents processed) and reading the store's counts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig, ConfigError } from "../../src/config.ts";
import { startTestServer, waitForDocument, signup, type TestAccount, type TestServer } from "../helpers/server.ts";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SHARED_SAMPLES_DIR } from "../fixtures.ts";
import pkg from "../../package.json" with { type: "json" };

const TOKEN = "scrape-0123456789abcdef";

/** The samples of a text exposition, by series (name and labels as written). */
function samples(text: string): Map<string, number> {
  const series = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    series.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return series;
}

async function scrape(server: TestServer, token: string | null = TOKEN) {
  const res = await fetch(`${server.url}/metrics`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe("with QUARRY_METRICS_TOKEN set", () => {
  let server: TestServer;
  let account: TestAccount;
  let kbId: string;
  beforeAll(async () => {
    server = await startTestServer({ env: { QUARRY_METRICS_TOKEN: TOKEN, QUARRY_LIMITS: "off" } });
    account = await signup(server);
    kbId = (await server.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "metered" } })).body.data.id;
    const doc = await server.request("POST", `/v1/knowledge-bases/${kbId}/documents/text`, {
      token: account.apiKey,
      body: { name: "heron.txt", text: "The grey heron waits in the reed bed for fish." },
    });
    expect((await waitForDocument(server, account.apiKey, kbId, doc.body.data.id)).status).toBe("ready");
  });
  afterAll(() => server.stop());

  test("counts requests by route pattern and status, searches by mode and documents by outcome", async () => {
    for (const mode of ["hybrid", "keyword", "keyword"]) {
      const res = await server.request("POST", `/v1/knowledge-bases/${kbId}/search`, { token: account.apiKey, body: { query: "heron fish", mode } });
      expect(res.status).toBe(200);
    }
    expect((await server.request("GET", "/v1/knowledge-bases/kb_00000000000000000000000000", { token: account.apiKey })).status).toBe(404);
    expect((await server.request("GET", "/no-such-route")).status).toBe(404);

    const res = await scrape(server);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const series = samples(res.text);
    const search = 'route="/api/v1/knowledge-bases/:kb_id/search"';
    expect(series.get(`quarry_http_requests_total{method="POST",${search},status="200"}`)).toBe(3);
    expect(series.get(`quarry_http_request_duration_seconds_count{method="POST",${search}}`)).toBe(3);
    expect(series.get(`quarry_http_request_duration_seconds_bucket{le="+Inf",method="POST",${search}}`)).toBe(3);
    expect(series.get(`quarry_http_request_duration_seconds_sum{method="POST",${search}}`)).toBeGreaterThan(0);
    expect(series.get('quarry_http_requests_total{method="GET",route="/api/v1/knowledge-bases/:kb_id",status="404"}')).toBe(1);
    expect(series.get('quarry_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
    expect(series.get('quarry_http_requests_total{method="POST",route="/api/auth/signup",status="201"}')).toBe(1);
    expect(series.get('quarry_search_duration_seconds_count{mode="hybrid"}')).toBe(1);
    expect(series.get('quarry_search_duration_seconds_count{mode="keyword"}')).toBe(2);
    expect(series.get('quarry_documents_processed_total{outcome="ready"}')).toBe(1);
    expect(series.get("quarry_chunks_indexed_total")).toBe(1);
    expect(series.get('quarry_pipeline_step_duration_seconds_count{step="embed"}')).toBe(1);
    for (const status of ["pending", "parsing", "chunking", "embedding"]) expect(series.get(`quarry_documents_processing{status="${status}"}`)).toBe(0);
    expect(series.get("quarry_knowledge_bases")).toBe(1);
    expect(series.get("quarry_accounts")).toBe(1);
    expect(series.get("quarry_database_size_bytes")).toBeGreaterThan(100_000);
    expect(series.get("quarry_search_indexes_loaded")).toBe(1);
    expect(series.get("quarry_search_index_memory_budget_bytes")).toBe(512 * 2 ** 20);
    expect(series.get("process_resident_memory_bytes")).toBeGreaterThan(50 * 2 ** 20);
    expect(series.get("process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(series.get(`quarry_build_info{version="${pkg.version}"}`)).toBe(1);
    // Route patterns, never paths: no id or credential becomes a label.
    for (const secret of [kbId, account.id, account.apiKey, account.email]) expect(res.text).not.toContain(secret);

    // The scrape itself is counted (on the next one), and a document being processed shows by status: an
    // image, which OCR takes seconds to read, scraped right after its upload.
    const image = readFileSync(join(SHARED_SAMPLES_DIR, "images", "image_metadata.png"));
    const queued = await server.request("POST", `/v1/knowledge-bases/${kbId}/documents`, { token: account.apiKey, form: { file: new File([image], "scan.png") } });
    expect(queued.status).toBe(202);
    const next = samples((await scrape(server)).text);
    expect(next.get('quarry_http_requests_total{method="GET",route="/api/metrics",status="200"}')).toBe(1);
    const processing = ["pending", "parsing", "chunking", "embedding"].map((status) => next.get(`quarry_documents_processing{status="${status}"}`)!);
    expect(processing.reduce((a, b) => a + b, 0)).toBe(1);
    expect((await waitForDocument(server, account.apiKey, kbId, queued.body.data.id)).status).toBe("ready");
    const after = samples((await scrape(server)).text);
    expect(after.get('quarry_documents_processed_total{outcome="ready"}')).toBe(2);
    expect(after.get('quarry_pages_parsed_total')).toBe(1);
    expect(["pending", "parsing", "chunking", "embedding"].map((status) => after.get(`quarry_documents_processing{status="${status}"}`))).toEqual([0, 0, 0, 0]);
  });

  test("a missing or wrong token, an API key or a JWT is refused with 401", async () => {
    for (const token of [null, "scrape-0123456789abcdeX", account.apiKey, account.token]) {
      const res = await scrape(server, token);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="quarry-metrics"');
      expect(JSON.parse(res.text)).toEqual({ error: { code: "AUTHENTICATION_ERROR", message: "Invalid or missing metrics token" } });
    }
  });
});

test("without QUARRY_METRICS_TOKEN there are no metrics: the route is absent, a 404 like any unknown route's", async () => {
  const server = await startTestServer();
  try {
    const res = await scrape(server);
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text)).toEqual({
      error: { code: "NOT_FOUND", message: "Route not found: GET /api/metrics" },
    });
  } finally {
    await server.stop();
  }
});

test("a metrics token shorter than 16 characters or with spaces is a configuration error", () => {
  for (const token of ["short-token", "sixteen chars ok"]) {
    expect(() => loadConfig({ QUARRY_METRICS_TOKEN: token })).toThrow(ConfigError);
  }
  expect(() => loadConfig({}, ["--metrics-token", "short"])).toThrow("--metrics-token must be at least 16 printable ASCII characters without spaces");
  expect(loadConfig({ QUARRY_METRICS_TOKEN: TOKEN }).metricsToken).toBe(TOKEN);
  expect(loadConfig({}).metricsToken).toBeNull();
});
