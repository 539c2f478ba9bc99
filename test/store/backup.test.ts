// `quarry backup`, run as the real command against the data dir of a running server: the copy is a data
// directory, and a server started on it serves what was committed when the backup started, with the same
// keys, sessions, stored files and search segment.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestServer, waitForDocument, type TestServer } from "../helpers/server.ts";
import { addDocs, createKb, search, segments, waitForSegment } from "../search/search-helpers.ts";
import { canMountSmallDisk, mountSmallDisk } from "../helpers/small-disk.ts";

let server: TestServer;
let scratch: string;
beforeAll(async () => {
  // A segment as soon as 3 changes have stopped coming for half a second, so that there is one to copy.
  server = await startTestServer({ env: { QUARRY_SEGMENT_MIN_CHANGES: "3", QUARRY_LIMITS: "off" }, segmentQuietMs: 500 });
  scratch = mkdtempSync(join(tmpdir(), "quarry-backup-"));
});
afterAll(async () => {
  await server.stop();
  rmSync(scratch, { recursive: true, force: true });
});

async function quarry(...args: string[]) {
  const proc = Bun.spawn(["node_modules/.bin/bun", "src/main.ts", ...args], { stdout: "pipe", stderr: "pipe", env: { ...process.env, QUARRY_DATA_DIR: "" } });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

const GUIDE = "# Pond guide\n\n## Herons\n\nThe grey heron stands still in the shallows and strikes at passing fish.\n";

test("a backup taken while the server runs is served, as it was then, by a server started on the copy", async () => {
  const kb = await createKb(server);
  const upload = await server.request("POST", `/v1/knowledge-bases/${kb.kbId}/documents`, {
    token: kb.account.apiKey,
    form: { file: new File([GUIDE], "pond-guide.md"), metadata: JSON.stringify({ shelf: "birds" }) },
  });
  expect(upload.status).toBe(202);
  const guide = await waitForDocument(server, kb.account.apiKey, kb.kbId, upload.body.data.id);
  expect(guide.status).toBe("ready");
  await addDocs(server, kb, Array.from({ length: 4 }, (_, i) => ({ name: `note-${i}`, text: `Field note ${i}: an otter crossed the weir at dawn ${i}.` })));
  await waitForSegment(server.dataDir, kb.kbId);
  // The newest: the server keeps the one before it too for a while (SEGMENTS_KEPT), the backup only the one on record.
  const segment = segments(server.dataDir, kb.kbId).at(-1)!;
  const liveChunks = await server.request("GET", `/v1/knowledge-bases/${kb.kbId}/documents/${guide.id}/chunks`, { token: kb.account.apiKey });

  const destination = join(scratch, "nightly");
  mkdirSync(destination);
  chmodSync(destination, 0o755); // an empty folder made for it (the umask here is the server's 077): made private too
  const backup = await quarry("backup", destination, "--data-dir", server.dataDir);
  expect(backup.stderr).toBe("");
  expect(backup.code).toBe(0);
  expect(backup.stdout).toContain(`Backed up ${server.dataDir} to ${destination} in `);
  expect(backup.stdout).toMatch(/\n {2}files {5}5 files \(/);
  expect(backup.stdout).toMatch(/\n {2}indexes {3}1 segment \(/);
  expect(backup.stdout).toContain("jwt-secret copied");
  // Committed after the backup started: not in it.
  await addDocs(server, kb, [{ name: "later", text: "A kingfisher dived from the alder branch." }]);

  // Private like the data dir, and the segment copied under its own name.
  expect(statSync(destination).mode & 0o777).toBe(0o700);
  expect(statSync(join(destination, "quarry.db")).mode & 0o777).toBe(0o600);
  expect(statSync(join(destination, "jwt-secret")).mode & 0o777).toBe(0o600);
  expect(readFileSync(join(destination, guide.storage_path), "utf8")).toBe(GUIDE);
  expect(statSync(join(destination, guide.storage_path)).mode & 0o777).toBe(0o600);
  expect(segments(destination, kb.kbId)).toEqual([segment]);

  const copy = await startTestServer({ dataDir: destination, env: { QUARRY_LIMITS: "off" } });
  try {
    const base = await copy.request("GET", `/v1/knowledge-bases/${kb.kbId}`, { token: kb.account.apiKey });
    expect(base.status).toBe(200);
    expect(base.body.data.document_count).toBe(5);
    const found = await search(copy, kb, { query: "otter weir dawn 2", mode: "keyword", top_k: 1 });
    expect(found.results[0].document_id).toBe(kb.docs["note-2"]);
    const heron = await search(copy, kb, { query: "grey heron strikes fish", mode: "hybrid", top_k: 1 });
    expect(heron.results[0]).toMatchObject({ document_id: guide.id, document_name: "pond-guide.md", document_metadata: { shelf: "birds" } });
    expect((await search(copy, kb, { query: "kingfisher alder", mode: "keyword" })).results).toEqual([]);
    const chunks = await copy.request("GET", `/v1/knowledge-bases/${kb.kbId}/documents/${guide.id}/chunks`, { token: kb.account.apiKey });
    expect(chunks.body).toEqual(liveChunks.body);
    // The JWT from signup: the secret came along.
    expect((await copy.request("GET", "/v1/knowledge-bases", { token: kb.account.token })).status).toBe(200);
    // Served from the copied segment, not rebuilt from the database.
    expect(segments(destination, kb.kbId)).toEqual([segment]);
  } finally {
    await copy.stop();
  }
});

test("a destination that holds something, lies in the data dir, or is not given is refused before anything is copied", async () => {
  const used = join(scratch, "used");
  mkdirSync(used);
  writeFileSync(join(used, "notes.txt"), "keep me");
  const full = await quarry("backup", used, "--data-dir", server.dataDir);
  expect(full.code).toBe(2);
  expect(full.stderr).toContain(`${used} already exists and is not an empty directory: a backup goes into a new or empty one.`);
  expect(readFileSync(join(used, "notes.txt"), "utf8")).toBe("keep me");

  const within = await quarry("backup", join(server.dataDir, "backups"), "--data-dir", server.dataDir);
  expect(within.code).toBe(2);
  expect(within.stderr).toContain("The backup cannot go into the data directory it copies");

  // Also where the destination or the data dir is reached through a symbolic link.
  const link = join(scratch, "data-link");
  symlinkSync(server.dataDir, link);
  for (const [destination, dataDir] of [[join(link, "inside"), server.dataDir], [join(server.dataDir, "inside"), link], [join(link, "a", "b"), link]]) {
    const linked = await quarry("backup", destination, "--data-dir", dataDir);
    expect([destination, dataDir, linked.code]).toEqual([destination, dataDir, 2]);
    expect(linked.stderr).toContain("The backup cannot go into the data directory it copies");
  }
  expect(existsSync(join(server.dataDir, "inside"))).toBe(false);
  expect(existsSync(join(server.dataDir, "a"))).toBe(false);

  for (const args of [["backup", "--data-dir", server.dataDir], ["backup", "", "--data-dir", server.dataDir]]) {
    const missing = await quarry(...args);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("quarry backup <destination directory>");
  }

  // A destination that cannot be made is said to be the destination's fault, not the data dir's
  writeFileSync(join(scratch, "a-file"), "x");
  for (const [destination, reason] of [[join(scratch, "a-file", "sub"), "a folder on the way to it is a file"], ["/proc/quarry-backup", "no folder can be made there"]]) {
    const unmade = await quarry("backup", destination!, "--data-dir", server.dataDir);
    expect([destination, unmade.code, unmade.stderr.trim()]).toEqual([destination, 1, `quarry: cannot write the backup into ${destination}: ${reason}; choose another destination`]);
  }

  const noStore = await quarry("backup", join(scratch, "from-nothing"), "--data-dir", join(scratch, "no-data-dir"));
  expect(noStore.code).toBe(2);
  expect(noStore.stderr).toContain("No Quarry database at");
});

test("a backup that fails part-way leaves its destination empty and says why", async () => {
  const kb = await createKb(server);
  await addDocs(server, kb, [{ name: "tampered", text: "A stored file whose recorded path was edited by hand." }]);
  const db = new Database(join(server.dataDir, "quarry.db"));
  const { storage_path } = db.query<{ storage_path: string }, [string]>("SELECT storage_path FROM documents WHERE id = ?").get(kb.docs.tampered)!;
  db.query("UPDATE documents SET storage_path = '../outside.txt' WHERE id = ?").run(kb.docs.tampered);
  try {
    const destination = join(scratch, "failed");
    const res = await quarry("backup", destination, "--data-dir", server.dataDir);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("quarry: A stored file's path leads outside the data directory: ../outside.txt");
    expect(readdirSync(destination)).toEqual([]);
  } finally {
    db.query("UPDATE documents SET storage_path = ? WHERE id = ?").run(storage_path, kb.docs.tampered);
    db.close();
  }
});

test.if(canMountSmallDisk)("a destination without room is named as the one that is full, and is left empty", async () => {
  // Smaller than the database alone.
  const disk = mountSmallDisk("128k")!;
  try {
    const destination = join(disk.path, "backup");
    const res = await quarry("backup", destination, "--data-dir", server.dataDir);
    expect({ code: res.code, stderr: res.stderr.trim() }).toEqual({
      code: 1,
      stderr: `quarry: no space left in ${destination} for the backup (what was copied is removed): free space there or choose another destination`,
    });
    expect(readdirSync(destination)).toEqual([]);
  } finally {
    disk.unmount();
  }
});
