// Deleting a knowledge base (store/deletions.ts): hidden at once, its rows deleted in the
// background a slice at a time, and a deletion a stop interrupted is finished by the next start. Real
// server, real SQLite file, real model.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/store/db.ts";
import { signup, startTestServer, type TestServer } from "../helpers/server.ts";
import { ingest, keywordHits, vectorsPurged, workspace } from "./ingest-helpers.ts";

const text = (name: string, content: string) => new File([content], name, { type: "text/plain" });
const dataDir = mkdtempSync(join(tmpdir(), "quarry-kb-deletion-"));
let server: TestServer = await startTestServer({ dataDir, env: { QUARRY_LIMITS: "off" } });

afterAll(async () => {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test("a deletion a stop interrupted is hidden at once and finished by the next start; other knowledge bases are untouched", async () => {
  const doomed = await workspace(server);
  const kept = await workspace(server, doomed.account);
  const gone = await ingest(server, doomed, text("gone.txt", "Glaciers carve deep valleys as they creep downhill. ".repeat(200)));
  await ingest(server, doomed, text("gone-too.txt", "Glacier ice holds air bubbles from ancient winters."));
  const stays = await ingest(server, kept, text("stays.txt", "Glaciers also feed the rivers of the kept knowledge base."));
  expect(gone.chunk_count).toBeGreaterThan(1);
  const rowidsOf = (kbId: string) => server.server.ctx.db.query<{ rowid: number }, [string]>("SELECT rowid FROM chunks WHERE kb_id = ?").all(kbId).map((r) => r.rowid);
  const doomedRowids = rowidsOf(doomed.kbId);
  const keptRowids = rowidsOf(kept.kbId);
  await server.stop();

  // What a stop between the slices leaves: the mark, and part of the chunks deleted.
  const db = openDatabase(join(dataDir, "quarry.db"));
  db.query("UPDATE knowledge_bases SET deleting = 1 WHERE id = ?").run(doomed.kbId);
  db.query("DELETE FROM chunks WHERE rowid = (SELECT MIN(rowid) FROM chunks WHERE kb_id = ?)").run(doomed.kbId);
  db.close();

  server = await startTestServer({ dataDir, env: { QUARRY_LIMITS: "off" } });
  const token = doomed.account.apiKey;
  expect((await server.request("GET", `/v1/knowledge-bases/${doomed.kbId}`, { token })).status).toBe(404);
  expect((await server.request("GET", `${doomed.docs}/${gone.id}`, { token })).status).toBe(404);
  const list = await server.request("GET", "/v1/knowledge-bases", { token });
  expect(list.body.data.map((kb: { id: string }) => kb.id)).toEqual([kept.kbId]);

  const live = server.server.ctx.db;
  const rows = (sql: string) => live.query<{ n: number }, [string]>(sql).get(doomed.kbId)!.n;
  await server.server.ctx.deletions.settled();
  expect(rows("SELECT COUNT(*) AS n FROM knowledge_bases WHERE id = ?")).toBe(0);
  expect(rows("SELECT COUNT(*) AS n FROM documents WHERE kb_id = ?")).toBe(0);
  expect(rows("SELECT COUNT(*) AS n FROM chunks WHERE kb_id = ?")).toBe(0);
  await vectorsPurged(live);
  const vectors = (rowids: number[]) => live.query<{ n: number }, []>(`SELECT COUNT(*) AS n FROM chunk_vectors WHERE rowid IN (${rowids.join(",")})`).get()!.n;
  expect(vectors(doomedRowids)).toBe(0);
  expect(vectors(keptRowids)).toBe(keptRowids.length);
  expect(existsSync(join(dataDir, "files", doomed.kbId))).toBe(false);

  expect(await keywordHits(server, kept, "glaciers rivers")).toEqual([stays.id]);
});

test("a knowledge base being deleted no longer counts against the plan's knowledge base limit", async () => {
  const limited = await startTestServer();
  try {
    const account = await signup(limited);
    const ids: string[] = [];
    for (;;) {
      const res = await limited.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: `kb ${ids.length}` } });
      if (res.status !== 201) {
        expect(res.status).toBe(429);
        expect(res.body.error.details.resource).toBe("knowledge_bases");
        break;
      }
      ids.push(res.body.data.id);
    }
    expect((await limited.request("DELETE", `/v1/knowledge-bases/${ids[0]}`, { token: account.apiKey })).status).toBe(200);
    // The slot is free as soon as the deletion is answered.
    expect((await limited.request("POST", "/v1/knowledge-bases", { token: account.apiKey, body: { name: "replacement" } })).status).toBe(201);
  } finally {
    await limited.stop();
  }
});
