// `quarry accounts list` and `quarry accounts set-plan`, run as the real command against the data dir of
// a running server, which sees a plan change on the account's next request.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { signup, startTestServer, type TestAccount, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let alice: TestAccount;
let bob: TestAccount;
beforeAll(async () => {
  server = await startTestServer();
  alice = await signup(server);
  bob = await signup(server);
});
afterAll(() => server.stop());

async function quarry(...args: string[]) {
  const proc = Bun.spawn(["node_modules/.bin/bun", "src/main.ts", ...args], { stdout: "pipe", stderr: "pipe", env: { ...process.env, QUARRY_DATA_DIR: "" } });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

describe("quarry accounts", () => {
  test("list shows every account with its plan and usage", async () => {
    const res = await quarry("accounts", "list", "--data-dir", server.dataDir);
    expect(res.code).toBe(0);
    const lines = res.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ID\s+EMAIL\s+PLAN\s+STATUS\s+PAGES\s+QUERIES\s+CREATED$/);
    for (const account of [alice, bob]) {
      const line = lines.find((l) => l.startsWith(account.id))!;
      expect(line).toContain(account.email);
      expect(line).toMatch(/\btrial\b.*trial until .*0\/100\s+0\/500/);
    }
  });

  test("set-plan by email or id changes the plan at once, also for the running server", async () => {
    const byEmail = await quarry("accounts", "set-plan", alice.email, "pro", `--data-dir=${server.dataDir}`);
    expect(byEmail.code).toBe(0);
    expect(byEmail.stdout.trim()).toBe(`${alice.id} (${alice.email}): trial → pro`);
    const me = await server.request("GET", "/v1/account", { token: alice.apiKey });
    expect(me.body.data.plan).toBe("pro");
    expect(me.headers.get("ratelimit-limit")).toBe("50");
    const usage = await server.request("GET", "/v1/usage", { token: alice.apiKey });
    expect(usage.body.data.limits).toEqual({ pages_processed: 2000, search_queries: 15000 });

    const byId = await quarry("accounts", "set-plan", bob.id, "scale", "--data-dir", server.dataDir);
    expect(byId.stdout.trim()).toBe(`${bob.id} (${bob.email}): trial → scale`);
    const list = await quarry("accounts", "list", "--data-dir", server.dataDir);
    expect(list.stdout.split("\n").find((l) => l.startsWith(bob.id))).toMatch(/\bscale\s+set by operator\s+0\/15000\s+0\/120000/);
  });

  test("mistakes are explained: unknown plan, unknown account, missing database, unknown subcommand", async () => {
    const plan = await quarry("accounts", "set-plan", alice.email, "gold", "--data-dir", server.dataDir);
    expect(plan.code).toBe(2);
    expect(plan.stderr).toContain('Unknown plan "gold". Plans: trial, starter, pro, business, scale.');
    const account = await quarry("accounts", "set-plan", "nobody@example.com", "pro", "--data-dir", server.dataDir);
    expect(account.code).toBe(2);
    expect(account.stderr).toContain('No account with id or email "nobody@example.com"');
    const empty = mkdtempSync(join(tmpdir(), "quarry-cli-"));
    try {
      const missing = await quarry("accounts", "list", "--data-dir", empty);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain("No Quarry database at");
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    const planBefore = (await server.request("GET", "/v1/account", { token: alice.apiKey })).body.data.plan;
    for (const args of [["list", "extra"], ["set-plan", alice.email, planBefore === "pro" ? "scale" : "pro", "extra"]]) {
      const stray = await quarry("accounts", ...args, "--data-dir", server.dataDir);
      expect({ code: stray.code, stderr: stray.stderr.split("\n")[0] }).toEqual({ code: 2, stderr: 'Unexpected argument "extra".' });
    }
    expect((await server.request("GET", "/v1/account", { token: alice.apiKey })).body.data.plan).toBe(planBefore);
    const usage = await quarry("accounts", "--data-dir", server.dataDir);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("quarry accounts set-plan <account id or email> <plan>");
  });
});

describe("the command line", () => {
  test("an unknown option, a stray word or an option without its value is refused, not ignored", async () => {
    for (const [args, message] of [
      [["--prot", "9000"], 'unknown option "--prot"'],
      [["-p", "9000"], 'unknown option "-p"'],
      [["serve", "/srv/data"], 'unexpected argument "/srv/data"'],
      [["--port"], "--port needs a value"],
      [["--data-dir", "--port", "9000"], "--data-dir needs a value"],
      [["--workers", ""], "--workers needs a value"],
      [["--data-dir="], "--data-dir needs a value"],
    ] as const) {
      const run = await quarry(...args);
      expect({ args, code: run.code, error: run.stderr.includes(message) }).toEqual({ args, code: 1, error: true });
    }
  });

  test("--help anywhere prints the usage and runs nothing: reindex --help re-embeds no chunk", async () => {
    const run = await quarry("reindex", "--data-dir", server.dataDir, "--help");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("quarry reindex [options]");
    expect(run.stdout).not.toContain("Re-embedd");
    // every option with its variable, its meaning and, where it has one, its default
    expect(run.stdout).toMatch(/\n {2}--workers +QUARRY_WORKERS +ingestion workers, 1-64 \(one per CPU core\)\n/);
    expect(run.stdout).toMatch(/\n {2}--port +PORT +HTTP port \(8080\)\n/);
    expect(run.stdout).toContain("quarry --version");
  });
});
