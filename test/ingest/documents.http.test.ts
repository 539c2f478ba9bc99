// The document endpoints (spec 4.3) through HTTP: upload validation, listing and pagination, metadata
// updates, replacement, deletion of every trace, chunk paging, document_count and account isolation.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { signup, startTestServer, waitForDocument, type ApiResponse, type TestServer } from "../helpers/server.ts";
import { addText, allChunks, indexRows, ingest, keywordHits, replace, totalVectors, upload, vectorsPurged, workspace, type Workspace } from "./ingest-helpers.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { QUARRY_LIMITS: "off" } });
});
afterAll(() => server.stop());

const text = (name: string, content: string) => new File([content], name, { type: "text/plain" });
const get = (ws: Workspace, path = "") => server.request("GET", `${ws.docs}${path}`, { token: ws.account.apiKey });

/** Uploads "hello" as one multipart part with this Content-Disposition, written by hand. */
function uploadPart(ws: Workspace, disposition: string, boundary = "XyZ") {
  return server.request("POST", ws.docs, {
    token: ws.account.apiKey,
    headers: { "content-type": `multipart/form-data; boundary="${boundary}"` },
    body: `--${boundary}\r\nContent-Disposition: ${disposition}\r\nContent-Type: text/plain\r\n\r\nhello\r\n--${boundary}--\r\n`,
  });
}

function expectValidation(res: { status: number; body: any }, field: string | string[], message?: RegExp) {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe("VALIDATION_ERROR");
  expect(res.body.error.details.issues[0].path).toEqual(Array.isArray(field) ? field : [field]);
  if (message) expect(res.body.error.message).toMatch(message);
}

describe("POST /documents (upload)", () => {
  test("returns 202 with the document in pending; file_type is the lowercased extension", async () => {
    const ws = await workspace(server);
    const res = await upload(server, ws, text("Release Notes.MD", "# Release 2\n\nFaster uploads."), JSON.stringify({ team: "docs", v: 2 }));
    expect(res.status).toBe(202);
    expect(res.body.data).toMatchObject({
      name: "Release Notes.MD",
      file_type: "md",
      file_size_bytes: 28,
      status: "pending",
      chunk_count: 0,
      page_count: null,
      error_detail: null,
      metadata: { team: "docs", v: 2 },
    });
    const storage = res.body.data.storage_path;
    expect(storage.startsWith(`files/${ws.kbId}/${res.body.data.id}/`)).toBe(true);
    expect(await Bun.file(join(server.dataDir, storage)).text()).toBe("# Release 2\n\nFaster uploads.");
    const done = await waitForDocument(server, ws.account.apiKey, ws.kbId, res.body.data.id);
    expect(done.status).toBe("ready");
  });

  test("rejects a missing file, an unsupported or missing extension, an empty file and bad metadata", async () => {
    const ws = await workspace(server);
    const missing = await server.request("POST", ws.docs, { token: ws.account.apiKey, form: { metadata: "{}" } });
    expectValidation(missing, "file", /file/);
    expectValidation(await upload(server, ws, text("virus.exe", "MZ")), "file", /unsupported type "\.exe"/);
    expectValidation(await upload(server, ws, text("README", "hello")), "file", /no file extension/);
    expectValidation(await upload(server, ws, text("empty.txt", "")), "file", /empty/);
    expectValidation(await upload(server, ws, text("a.txt", "x"), "{not json"), "metadata", /JSON/);
    // The message names what was sent: a JSON array sent once is not said to have come twice, a JSON string is valid JSON
    const sent = async (metadata: string) => (await upload(server, ws, text("a.txt", "x"), metadata)).body.error;
    for (const [metadata, kind] of [["[1,2]", "an array"], ['[{"a":1}]', "an array"], ["42", "a number"], ['"x"', "a string"], ["true", "a boolean"], ["null", "null"]]) {
      expect(await sent(metadata!)).toEqual({
        code: "VALIDATION_ERROR",
        message: `metadata: must be a JSON object such as {"team":"support"}, not ${kind}`,
        details: { issues: [{ path: ["metadata"], message: `must be a JSON object such as {"team":"support"}, not ${kind}` }] },
      });
    }
    expect((await get(ws)).body.data).toEqual([]);
  });

  test("a JSON body, or the file's own bytes, sent to upload or replace is told to send a form; without a credential it is a 401 first", async () => {
    const ws = await workspace(server);
    const doc = await upload(server, ws, text("a.txt", "x"));
    for (const [method, path] of [["POST", ws.docs], ["PUT", `${ws.docs}/${doc.body.data.id}`]] as const) {
      const sent: [string, ApiResponse][] = [
        ["application/json", await server.request(method, path, { token: ws.account.apiKey, body: { file: "a.txt", metadata: {} } })],
      ];
      for (const contentType of ["application/pdf", "text/plain", "application/x-www-form-urlencoded"]) {
        sent.push([contentType, await server.request(method, path, { token: ws.account.apiKey, headers: { "content-type": contentType }, body: "file=%25PDF-1.4" })]);
      }
      for (const [contentType, res] of sent) {
        expect([res.status, res.body.error.code, res.body.error.details.issues[0].path]).toEqual([400, "VALIDATION_ERROR", ["headers", "content-type"]]);
        expect(res.body.error.details.issues[0].message).toBe("must be multipart/form-data");
        expect(res.body.error.message).toBe(`Unsupported Content-Type "${contentType}": this endpoint takes multipart/form-data, the document in a part named file (metadata, optional, a JSON string)`);
      }
      expect((await server.request(method, path, { body: { file: "a.txt" } })).status).toBe(401);
    }
    // No body at all is told what the body must be.
    expectValidation(await server.request("POST", ws.docs, { token: ws.account.apiKey }), [], /multipart\/form-data body with the document/);
  });

  test("odd multipart bodies: a nameless or repeated file part is a 400 naming file; metadata may come as a file part", async () => {
    const ws = await workspace(server);
    const raw = (parts: string[]) =>
      server.request("POST", ws.docs, {
        token: ws.account.apiKey,
        headers: { "content-type": "multipart/form-data; boundary=XyZ" },
        body: `${parts.map((part) => `--XyZ\r\n${part}\r\n`).join("")}--XyZ--\r\n`,
      });
    const filePart = (filename: string, content = "hello") =>
      `Content-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: text/plain\r\n\r\n${content}`;
    expectValidation(await raw([filePart("")]), "file", /file name/);
    expectValidation(await raw([filePart("a.txt"), filePart("b.txt")]), "file", /once/);
    const metadataPart = (json: string) => `Content-Disposition: form-data; name="metadata"\r\n\r\n${json}`;
    expectValidation(await raw([filePart("a.txt"), metadataPart('{"a":1}'), metadataPart('{"b":2}')]), "metadata", /sent once; it came 2 times$/);
    // Its text is not even parsed past 1 MB (lone surrogates in it once took seconds of the server's thread to replace)
    expectValidation(await raw([filePart("a.txt"), metadataPart(`{"a":"${"\\ud800".repeat(200_000)}"}`)]), "metadata", /^metadata: must be at most 32768 bytes as JSON/);
    expectValidation(await raw(['Content-Disposition: form-data; name="file"\r\n\r\nhello']), "file", /must be a file/);
    const withMetadataFile = await upload(server, ws, text("a.txt", "x"), new File(['{"from":"file"}'], "metadata.json"));
    expect(withMetadataFile.status).toBe(202);
    expect(withMetadataFile.body.data.metadata).toEqual({ from: "file" });
    expectValidation(await upload(server, ws, text("a.txt", "x"), new File(["{oops"], "metadata.json")), "metadata", /JSON/);
    expect((await get(ws)).body.data.length).toBe(1);
  });

  test("rejects a file over 50 MB", async () => {
    const ws = await workspace(server);
    const res = await upload(server, ws, new File([new Uint8Array(50 * 1024 * 1024 + 1)], "big.txt"));
    expectValidation(res, "file", /too large/);
    expect((await get(ws)).body.data).toEqual([]);
  });

  test("strips directories and control characters from file names", async () => {
    const ws = await workspace(server);
    const res = await upload(server, ws, text("../../etc/pass\u0007wd.txt", "root"));
    expect(res.status).toBe(202);
    expect(res.body.data.name).toBe("passwd.txt");
    expect(res.body.data.storage_path).not.toContain("..");
    expect(existsSync(join(server.dataDir, res.body.data.storage_path))).toBe(true);
    // Bidirectional overrides and isolates would make the name read otherwise than it is.
    const spoof = await upload(server, ws, text("report\u202Etxt.exe\u2066.txt", "quarterly figures"));
    expect(spoof.body.data.name).toBe("reporttxt.exe.txt");
  });

  test("a name sent as RFC 2047 encoded words (.NET's HttpClient, for a name outside ASCII), percent-encoded or with quoted-string escapes is decoded", async () => {
    const ws = await workspace(server);
    const raw = (disposition: string) => uploadPart(ws, disposition);
    // As .NET writes it once the part's name is quoted (its unquoted name=file is not read by the form parser).
    const dotnet = await raw(`form-data; name="file"; filename="=?utf-8?B?csOpc3Vtw6kudHh0?="; filename*=utf-8''r%C3%A9sum%C3%A9.txt`);
    expect([dotnet.status, dotnet.body.data.name, dotnet.body.data.file_type]).toEqual([202, "résumé.txt", "txt"]);
    const q = await raw('form-data; name="file"; filename="=?ISO-8859-1?Q?caf=E9_menu.md?="');
    expect(q.body.data.name).toBe("café menu.md");
    // Not a valid encoded word: kept as sent.
    const odd = await raw('form-data; name="file"; filename="=?utf-8?B?!!?=.txt"');
    expect(odd.body.data.name).toBe("=?utf-8?B?!!?=.txt");
    // A quoted string's escapes, as Go's mime/multipart writes them: the quote is the name's, not a path separator.
    const quoted = await raw('form-data; name="file"; filename="say \\"hi\\".txt"');
    expect(quoted.body.data.name).toBe('say "hi".txt');
    // Percent-encoded (RFC 7578 §4.2), as Python's aiohttp sends every name and browsers a quote; a "%" that
    // starts no escape is the name's own.
    const percent = [["my%20report%20%28final%29.md", "my report (final).md"], ["r%C3%A9sum%C3%A9.txt", "résumé.txt"], ["%22quoted%22.txt", '"quoted".txt'], ["100%.md", "100%.md"], ["50%off%2.txt", "50%off%2.txt"]];
    // A name that came as encoded words is not percent-decoded as well: "%20" is part of it.
    percent.push(["=?utf-8?B?YSUyMGIudHh0?=", "a%20b.txt"]);
    for (const [sent, stored] of percent) {
      const res = await raw(`form-data; name="file"; filename="${sent}"`);
      expect([sent, res.status, res.body.data.name]).toEqual([sent, 202, stored]);
    }
  });

  test("a name sent as filename*= (RFC 5987) is the document's name, before or after filename= or alone", async () => {
    const ws = await workspace(server);
    // A boundary with characters RFC 2046 allows, quoted.
    const raw = (disposition: string) => uploadPart(ws, disposition, "a b:c");
    const sent = [
      [`form-data; name="file"; filename*=UTF-8''d%C3%A9j%C3%A0%20vu.txt; filename="deja vu.txt"`, "déjà vu.txt"],
      [`form-data; name="file"; filename="deja vu.txt"; filename*=UTF-8''d%C3%A9j%C3%A0%20vu.txt`, "déjà vu.txt"],
      // Python's urllib3 1.x, for a name outside ASCII: filename*= alone.
      [`form-data; name="file"; filename*=utf-8''r%C3%A9sum%C3%A9.md`, "résumé.md"],
      [`form-data; filename*=ISO-8859-1'fr'caf%E9%20100%25%20%22menu%22.md; name="file"`, 'café 100% "menu".md'],
      // Not an ext-value in a charset it names correctly: filename= stands.
      [`form-data; name="file"; filename*=UTF-8''%FF.txt; filename="fallback.txt"`, "fallback.txt"],
      [`form-data; name="file"; filename*=KOI8-R''%C1.txt; filename="fallback.txt"`, "fallback.txt"],
      // Raw text is no ext-value (RFC 5987 takes only ASCII): filename= stands.
      [`form-data; name="file"; filename="上海.txt"; filename*=UTF-8''上海.txt`, "上海.txt"],
      [`form-data; name="file"; filename*=UTF-8''a%22b%5Cc.txt`, "c.txt"],
      // An empty or blank name names nothing: filename= stands.
      [`form-data; name="file"; filename="fb.txt"; filename*=UTF-8''`, "fb.txt"],
      [`form-data; name="file"; filename="fb.txt"; filename*=UTF-8''%20`, "fb.txt"],
      // Read back exactly as a name sent as filename= would be: control characters (a NUL too) dropped, "%"
      // kept, encoded words decoded.
      [`form-data; name="file"; filename*=UTF-8''a%00b%0D%0A.txt`, "ab.txt"],
      [`form-data; name="file"; filename*=UTF-8''100%25%20off%2541.txt`, "100% off%41.txt"],
      [`form-data; name="file"; filename*=UTF-8''%3D%3Futf-8%3FQ%3Fab%3F%3D%20100%25%22.txt`, 'ab 100%".txt'],
      // A name an upload cannot take (nothing left once cleaned, no extension) leaves filename= standing.
      ...["%01", "%E2%80%AE", "dir%2F", "b.txt%5C", "..", "noext"].map((value) => [`form-data; name="file"; filename="good.txt"; filename*=UTF-8''${value}`, "good.txt"]),
      // The parser stops reading parameters at an unquoted value: the name and filename are written first.
      [`form-data; name="file"; filename="a.txt"; filename*=UTF-8''%C3%A9.txt; size=5`, "é.txt"],
      [`form-data; name="file"; filename="a.txt"; filename*0*=UTF-8''%C3%A9; filename*1*=.txt`, "a.txt"],
      // Where filename*= is not used, the filename the parser takes from the line as sent, quoted or not.
      [`form-data; name="file"; filename*=UTF-8''%FF.txt; foo="bar"; filename=a.txt`, "a.txt"],
      [`form-data; name="file"; filename*=UTF-8''noext; filename=""; filename="b.md"`, "b.md"],
      [`form-data; filename*=UTF-8''%FF.txt; name="x"; filename="x.txt"; name=file`, "x.txt"],
      // The part keeps the name the parser took from the line as sent (whichever name= that is), else its first.
      [`form-data; name="file"; filename="a.txt"; size=12; name="other"; filename*=UTF-8''b.txt`, "b.txt"],
      [`form-data; name="file"; filename="m.txt"; filename*=UTF-8''%C3%A9.txt; name="x"`, "é.txt"],
      [`form-data; filename="a.txt"; filename*=UTF-8''d.txt; name="x"; name="file"`, "d.txt"],
      [`form-data; filename*=UTF-8''e.txt; name="up"; name="file"; filename="c.txt"`, "e.txt"],
      // However the parameter is written, whatever the file holds ("hello").
      [`form-data; name="file"; filename="fallback.txt"; FileName*=UTF-8''r%C3%A9sum%C3%A9.txt`, "résumé.txt"],
      [`form-data; name="file"; filename="fallback.txt"; filename* = UTF-8''%C3%A9t%C3%A9.txt`, "été.txt"],
    ];
    for (const [disposition, name] of sent) {
      const res = await raw(disposition);
      expect([disposition, res.status, res.body.data?.name, res.body.data?.file_size_bytes]).toEqual([disposition, 202, name, 5]);
    }
  });

  test("metadata sent both as text and as file parts is refused, whichever way the file parts are named", async () => {
    const ws = await workspace(server);
    const filePart = (named: string) => `--XX\r\nContent-Disposition: form-data; name="metadata"; ${named}\r\n\r\n{"a":1}\r\n`;
    for (const files of [[filePart('filename="m.json"')], [filePart("filename*=UTF-8''m.json")], [filePart('filename="m.json"'), filePart('filename="n.json"')]]) {
      const body = [
        '--XX\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello\r\n',
        ...files,
        '--XX\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n{"b":2}\r\n--XX--\r\n',
      ].join("");
      const res = await server.request("POST", ws.docs, { token: ws.account.apiKey, headers: { "content-type": "multipart/form-data; boundary=XX" }, body });
      expectValidation(res, "metadata", /sent once; it came both as text and as a file/);
    }
    expect((await get(ws)).body.data).toEqual([]);
  });

  test("filename*= is read in every part, and never in a file's content", async () => {
    const ws = await workspace(server);
    const boundary = "------------------------a1b2c3d4e5f6a7b8"; // curl's length: longer than the first part's content
    const part = (disposition: string, content: string) => `--${boundary}\r\nContent-Disposition: ${disposition}\r\n\r\n${content}\r\n`;
    const send = (body: string) =>
      server.request("POST", ws.docs, { token: ws.account.apiKey, headers: { "content-type": `multipart/form-data; boundary=${boundary}` }, body });
    const second = await send(`${part(`form-data; name="attachment"; filename*=utf-8''%C3%BC.txt`, "small")}${part(`form-data; name="file"; filename*=utf-8''%C3%A9t%C3%A9.txt`, "hello")}--${boundary}--\r\n`);
    expect([second.status, second.body.data?.name]).toEqual([202, "été.txt"]);
    // Text in the file that looks like a part's header, after a bare line feed or after a delimiter the parser
    // does not take (blanks before its CRLF), is content, kept byte for byte.
    for (const fake of [`\n--${boundary}\n`, `\r\n--${boundary} \r\n`, `\r\n--${boundary}\t\r\n`]) {
      const content = `text${fake}Content-Disposition: form-data; name="x"; filename*=UTF-8''zz.txt\r\nX: y\r\n\r\ntail`;
      const kept = await send(`${part('form-data; name="file"; filename="plain.txt"', content)}--${boundary}--\r\n`);
      expect([kept.status, kept.body.data.file_size_bytes]).toEqual([202, Buffer.byteLength(content)]);
      expect(readFileSync(join(server.dataDir, kept.body.data.storage_path), "utf8")).toBe(content);
    }
  });

  test("a multipart upload sent chunked past the size limit is refused as too large", async () => {
    const ws = await workspace(server);
    const chunk = new Uint8Array(1024 * 1024).fill(0x61);
    let sent = 0;
    const head = new TextEncoder().encode('--XyZ\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n\r\n');
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(head);
        if (sent++ < 60) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await fetch(`${server.url}${ws.docs}`, {
      method: "POST",
      headers: { authorization: `Bearer ${ws.account.apiKey}`, "content-type": "multipart/form-data; boundary=XyZ" },
      body: stream,
    }).catch((error: Error) => error);
    // The server answers once the limit is passed; a client still sending may see the connection close first.
    if (res instanceof Response) {
      expect(res.status).toBe(400);
      const body = await res.json();
      expect(body.error.code).toBe("VALIDATION_ERROR");
      expect(body.error.details.issues[0].path).toEqual(["body"]);
    }
    expect((await get(ws)).body.data).toEqual([]);
  });

  test("a name that is only an extension is stored under file.<extension>, never as a hidden file", async () => {
    const ws = await workspace(server);
    for (const name of [".txt", "  .txt", "...notes.md"]) {
      const res = await upload(server, ws, text(name, "a short note"));
      expect(res.status).toBe(202);
      expect(basename(res.body.data.storage_path)).toBe(name === "...notes.md" ? "file.notes.md" : "file.txt");
    }
  });

  test("a name over 256 characters is rejected", async () => {
    const ws = await workspace(server);
    expectValidation(await upload(server, ws, text(`${"n".repeat(253)}.txt`, "x")), "file", /^file: its name must be at most 256 characters \(this one has 257\)$/);
    expect((await upload(server, ws, text(`${"n".repeat(252)}.txt`, "x"))).status).toBe(202);
  });
});

describe("request history", () => {
  test("records the file's name, size and type (never its contents) and the document's status", async () => {
    const ws = await workspace(server);
    const res = await upload(server, ws, text("minutes.txt", "secret words of the meeting"), '{"team":"ops"}');
    const textRes = await addText(server, ws, { text: "more secret words", name: "t.txt" });
    server.server.ctx.requestLog.flush();
    const entry = async (id: string) => (await server.request("GET", `/v1/requests/${id}`, { token: ws.account.apiKey })).body.data;
    const logged = await entry(res.headers.get("x-request-id")!);
    expect(logged.kb_id).toBe(ws.kbId);
    expect(logged.request_summary).toEqual({ file_name: "minutes.txt", file_size_bytes: 27, file_type: "txt", metadata_keys: ["team"] });
    expect(logged.response_summary).toEqual({ document_id: res.body.data.id, status: "pending" });
    const loggedText = await entry(textRes.headers.get("x-request-id")!);
    expect(loggedText.request_summary).toEqual({ name: "t.txt", file_type: "txt", file_size_bytes: 17, text_length: 17, metadata_keys: [] });
    expect(JSON.stringify([logged, loggedText])).not.toContain("secret");
    // The name as the document has it: decoded, without directories
    const encoded = await upload(server, ws, text("notes/x.md%2Etxt", "a percent-encoded name"));
    server.server.ctx.requestLog.flush();
    expect((await entry(encoded.headers.get("x-request-id")!)).request_summary).toMatchObject({ file_name: "x.md.txt", file_type: "txt" });
    const spoofed = await upload(server, ws, text("\u202Ereport.txt\t ", "a name with a bidirectional override"));
    expect(spoofed.body.data.name).toBe("report.txt");
    // a part sent with filename="" is refused, and logged as having no name (nothing left out)
    const nameless = await server.request("POST", ws.docs, {
      token: ws.account.apiKey,
      headers: { "content-type": "multipart/form-data; boundary=XyZ" },
      body: '--XyZ\r\nContent-Disposition: form-data; name="file"; filename=""\r\nContent-Type: text/plain\r\n\r\nhello\r\n--XyZ--\r\n',
    });
    expect(nameless.status).toBe(400);
    server.server.ctx.requestLog.flush();
    expect((await entry(spoofed.headers.get("x-request-id")!)).request_summary).toMatchObject({ file_name: "report.txt", file_type: "txt" });
    expect((await entry(nameless.headers.get("x-request-id")!)).request_summary).toEqual({ file_name: "", file_size_bytes: 5, file_type: null });
  });
});

describe("GET /documents", () => {
  test("lists newest first with cursor pagination (default 20, max 100) and a status filter", async () => {
    const ws = await workspace(server);
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) {
      const res = await addText(server, ws, { text: `note ${i}`, name: `n${i}.txt` });
      ids.push(res.body.data.id);
    }
    const first = await get(ws);
    expect(first.status).toBe(200);
    expect(first.body.data.length).toBe(20);
    expect(first.body.meta.has_more).toBe(true);
    expect(first.body.data.map((d: any) => d.id)).toEqual([...ids].reverse().slice(0, 20));
    const second = await get(ws, `?cursor=${first.body.meta.cursor}`);
    expect(second.body.data.map((d: any) => d.id)).toEqual([...ids].reverse().slice(20));
    expect(second.body.meta).toEqual({ cursor: null, has_more: false });

    expect((await get(ws, "?limit=100")).body.data.length).toBe(23);
    expectValidation(await get(ws, "?limit=101"), ["query", "limit"]);
    expectValidation(await get(ws, "?limit=0"), ["query", "limit"]);
    expectValidation(await get(ws, "?status=done"), ["query", "status"]);
    expectValidation(await get(ws, "?cursor=garbage"), ["query", "cursor"]);
    // junk appended to a real cursor is refused, not skipped by the base64 decoding
    for (const junk of ["x", "!!", "%20", "="]) expectValidation(await get(ws, `?cursor=${first.body.meta.cursor}${junk}`), ["query", "cursor"]);
    // an empty cursor is the first page (ids compared: statuses move on while the notes are processed)
    expect((await get(ws, "?cursor=")).body.data.map((d: any) => d.id)).toEqual(first.body.data.map((d: any) => d.id));
    // a cursor is refused by every other list, not read as one of its keys
    const docCursor = first.body.meta.cursor;
    const chunksPath = `/v1/knowledge-bases/${ws.kbId}/documents/${ids[0]}/chunks`;
    for (const path of ["/v1/knowledge-bases", chunksPath, "/v1/requests"]) {
      expectValidation(await server.request("GET", `${path}?cursor=${docCursor}`, { token: ws.account.apiKey }), ["query", "cursor"]);
    }
    const secondKb = await server.request("POST", "/v1/knowledge-bases", { token: ws.account.apiKey, body: { name: "second" } });
    const kbCursor = (await server.request("GET", "/v1/knowledge-bases?limit=1", { token: ws.account.apiKey })).body.meta.cursor;
    expect(typeof kbCursor).toBe("string");
    expectValidation(await get(ws, `?cursor=${kbCursor}`), ["query", "cursor"]);
    // nor by the same kind of list of another owner: another knowledge base's documents, another account's knowledge bases
    const secondDocs = `/v1/knowledge-bases/${secondKb.body.data.id}/documents`;
    expectValidation(await server.request("GET", `${secondDocs}?cursor=${docCursor}`, { token: ws.account.apiKey }), ["query", "cursor"]);
    const stranger = await signup(server);
    expectValidation(await server.request("GET", `/v1/knowledge-bases?cursor=${kbCursor}`, { token: stranger.apiKey }), ["query", "cursor"]);

    for (const id of ids) await waitForDocument(server, ws.account.apiKey, ws.kbId, id);
    expect((await get(ws, "?status=ready&limit=100")).body.data.length).toBe(23);
    expect((await get(ws, "?status=pending")).body.data).toEqual([]);
    const failed = await upload(server, ws, text("broken.json", "{nope"));
    await waitForDocument(server, ws.account.apiKey, ws.kbId, failed.body.data.id);
    expect((await get(ws, "?status=failed")).body.data.map((d: any) => d.id)).toEqual([failed.body.data.id]);
  });
});

describe("GET /documents/{id}/chunks", () => {
  test("pages through chunks in chunk_index order with a chunk_index cursor", async () => {
    const ws = await workspace(server);
    const paragraphs = Array.from({ length: 120 }, (_, i) => `Paragraph ${i} describes topic number ${i} in some detail, with several words to fill the chunk.`);
    const res = await addText(server, ws, { text: paragraphs.join("\n\n") });
    const doc = await waitForDocument(server, ws.account.apiKey, ws.kbId, res.body.data.id);
    expect(doc.chunk_count).toBeGreaterThan(3);
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await get(ws, `/${doc.id}/chunks?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((c: any) => c.chunk_index));
      cursor = page.body.meta.cursor;
      expect(page.body.meta.has_more).toBe(cursor !== null);
    } while (cursor);
    expect(seen).toEqual(Array.from({ length: doc.chunk_count }, (_, i) => i));
    // the cursor is the chunk_index of the page's last chunk ("based on chunk_index"), which a client may write itself
    const firstPage = await get(ws, `/${doc.id}/chunks?limit=2`);
    expect(firstPage.body.meta).toEqual({ cursor: "1", has_more: true });
    expect((await get(ws, `/${doc.id}/chunks?limit=2&cursor=2`)).body.data.map((c: any) => c.chunk_index)).toEqual([3, 4]);
    // an empty cursor is the first page, as in every list
    expect((await get(ws, `/${doc.id}/chunks?limit=2&cursor=`)).body).toEqual(firstPage.body);
    // anything but a whole number from 0 is refused, another list's cursor too
    await addText(server, ws, { text: "Another document." });
    const documentsCursor = (await get(ws, "?limit=1")).body.meta.cursor;
    expect(typeof documentsCursor).toBe("string");
    expect((await get(ws, `/${doc.id}/chunks?limit=2&cursor=02`)).body.data.map((c: any) => c.chunk_index)).toEqual([3, 4]);
    for (const cursor of ["-5", "2.5", "+2", "1e3", "abc", documentsCursor, Buffer.from(JSON.stringify(["chunks", doc.id, 2])).toString("base64url")]) {
      expectValidation(await get(ws, `/${doc.id}/chunks?cursor=${cursor}`), ["query", "cursor"]);
    }
    for (const past of [doc.chunk_count + 5, 2 ** 53, "9".repeat(40)]) {
      expect((await get(ws, `/${doc.id}/chunks?cursor=${past}`)).body).toEqual({ data: [], meta: { cursor: null, has_more: false } });
    }
    const all = await allChunks(server, ws, doc.id);
    expect(all.map((c) => c.text).join(" ")).toContain("Paragraph 119 describes");
  });
});

describe("PATCH /documents/{id}", () => {
  test("replaces metadata without re-processing", async () => {
    const ws = await workspace(server);
    const created = await addText(server, ws, { text: "Keep me as I am.", metadata: { a: 1, b: 2 } });
    const ready = await waitForDocument(server, ws.account.apiKey, ws.kbId, created.body.data.id);
    const chunkIds = (await allChunks(server, ws, ready.id)).map((c) => c.id);
    await Bun.sleep(5);
    const res = await server.request("PATCH", `${ws.docs}/${ready.id}`, { token: ws.account.apiKey, body: { metadata: { c: 3 } } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: ready.id, status: "ready", chunk_count: ready.chunk_count, metadata: { c: 3 } });
    expect(res.body.data.updated_at > ready.updated_at).toBe(true);
    await Bun.sleep(300);
    expect((await get(ws, `/${ready.id}`)).body.data.status).toBe("ready");
    expect((await allChunks(server, ws, ready.id)).map((c) => c.id)).toEqual(chunkIds);

    for (const [body, message] of [[{}, "is required"], [{ metadata: [1] }, "must be a JSON object"], [{ metadata: "x" }, "must be a JSON object"], [{ metadata: null }, "must be a JSON object"]] as const) {
      const res = await server.request("PATCH", `${ws.docs}/${ready.id}`, { token: ws.account.apiKey, body });
      expectValidation(res, "metadata");
      expect(res.body.error.details.issues[0].message).toBe(message);
    }
  });
});

describe("PUT /documents/{id} (replace)", () => {
  test("keeps id and metadata, swaps every chunk, and removes the old file", async () => {
    const ws = await workspace(server);
    const original = await ingest(server, ws, text("plan.txt", "The walrus colony gathers on the northern beach every summer."), '{"owner":"ana"}');
    const oldChunkIds = (await allChunks(server, ws, original.id)).map((c) => c.id);
    const db = server.server.ctx.db;
    expect(await keywordHits(server, ws, "walrus")).toEqual([original.id]);

    const res = await replace(server, ws, original.id, text("plan-v2.md", "# Plan\n\nThe flamingo flock feeds in the salt lagoon at dawn."));
    expect(res.status).toBe(202);
    expect(res.body.data).toMatchObject({ id: original.id, status: "pending", name: "plan-v2.md", file_type: "md", metadata: { owner: "ana" } });
    expect(res.body.data.created_at).toBe(original.created_at);
    const replaced = await waitForDocument(server, ws.account.apiKey, ws.kbId, original.id);
    expect(replaced.status).toBe("ready");
    const chunks = await allChunks(server, ws, original.id);
    expect(chunks.some((c) => oldChunkIds.includes(c.id))).toBe(false);
    expect(chunks.map((c) => c.text).join(" ")).toContain("flamingo");
    expect(await keywordHits(server, ws, "walrus")).toEqual([]);
    expect(await keywordHits(server, ws, "flamingo")).toEqual([original.id]);
    expect(indexRows(db, original.id)).toEqual({ chunks: replaced.chunk_count, vectors: replaced.chunk_count});
    expect(existsSync(join(server.dataDir, original.storage_path))).toBe(false);
    expect(existsSync(join(server.dataDir, replaced.storage_path))).toBe(true);

    const withMetadata = await replace(server, ws, original.id, text("plan-v3.txt", "Third version."), '{"owner":"bo"}');
    expect(withMetadata.body.data.metadata).toEqual({ owner: "bo" });
    await waitForDocument(server, ws.account.apiKey, ws.kbId, original.id);
    const list = await get(ws);
    expect(list.body.data.map((d: any) => d.id)).toEqual([original.id]);
  });

  test("is refused with 409 while the document is still processing", async () => {
    const ws = await workspace(server);
    // A long document keeps the single test worker busy, so the second one stays pending.
    const long = await addText(server, ws, { text: "Sentence about rivers and their deltas. ".repeat(1000) });
    const queued = await addText(server, ws, { text: "waiting in line" });
    const res = await replace(server, ws, queued.body.data.id, text("new.txt", "new"));
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: "CONFLICT", message: "Document is still processing" });
    await waitForDocument(server, ws.account.apiKey, ws.kbId, long.body.data.id);
    const after = await waitForDocument(server, ws.account.apiKey, ws.kbId, queued.body.data.id);
    expect(after.name).toBe(queued.body.data.name);
    expect(readdirSync(join(server.dataDir, "files", ws.kbId, queued.body.data.id)).length).toBe(1);
  });

  test("a failed document can be replaced, and a failed replacement leaves no chunks", async () => {
    const ws = await workspace(server);
    const broken = await ingest(server, ws, text("data.json", "{broken"));
    expect(broken.status).toBe("failed");
    await replace(server, ws, broken.id, text("data.json", '{"ok": true}'));
    const fixed = await waitForDocument(server, ws.account.apiKey, ws.kbId, broken.id);
    expect(fixed).toMatchObject({ status: "ready", error_detail: null });
    expect(fixed.chunk_count).toBeGreaterThan(0);
    await replace(server, ws, broken.id, text("data.json", "{broken again"));
    const failedAgain = await waitForDocument(server, ws.account.apiKey, ws.kbId, broken.id);
    expect(failedAgain.status).toBe("failed");
    expect(failedAgain.chunk_count).toBe(0);
    expect(indexRows(server.server.ctx.db, broken.id)).toEqual({ chunks: 0, vectors: 0});
  });

  test("validates the replacement like an upload", async () => {
    const ws = await workspace(server);
    const doc = await ingest(server, ws, text("a.txt", "alpha"));
    expectValidation(await replace(server, ws, doc.id, text("a.exe", "x")), "file");
    expectValidation(await replace(server, ws, doc.id, text("a.txt", "x"), "[]"), "metadata");
    expect((await get(ws, `/${doc.id}`)).body.data).toMatchObject({ status: "ready", name: "a.txt" });
  });
});

describe("DELETE /documents/{id}", () => {
  test("removes the document, its chunks, vectors, keyword rows and stored file; document_count stays exact", async () => {
    const ws = await workspace(server);
    const kb = () => server.request("GET", `/v1/knowledge-bases/${ws.kbId}`, { token: ws.account.apiKey });
    const keep = await ingest(server, ws, text("keep.txt", "The lighthouse beam sweeps the harbour."));
    const gone = await ingest(server, ws, text("gone.txt", "The volcano erupted ash over the valley."));
    expect((await kb()).body.data.document_count).toBe(2);
    const db = server.server.ctx.db;
    await vectorsPurged(db); // what earlier tests deleted, so that only this deletion is counted below
    const vectorsBefore = totalVectors(db);

    const res = await server.request("DELETE", `${ws.docs}/${gone.id}`, { token: ws.account.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { deleted: true } });
    expect((await get(ws, `/${gone.id}`)).status).toBe(404);
    expect((await get(ws, `/${gone.id}/chunks`)).status).toBe(404);
    expect(indexRows(db, gone.id)).toEqual({ chunks: 0, vectors: 0});
    await vectorsPurged(db);
    expect(totalVectors(db)).toBe(vectorsBefore - gone.chunk_count);
    expect(await keywordHits(server, ws, "volcano")).toEqual([]);
    expect(await keywordHits(server, ws, "lighthouse")).toEqual([keep.id]);
    expect(existsSync(join(server.dataDir, "files", ws.kbId, gone.id))).toBe(false);
    expect(existsSync(join(server.dataDir, keep.storage_path))).toBe(true);
    expect((await kb()).body.data.document_count).toBe(1);
    expect((await server.request("DELETE", `${ws.docs}/${gone.id}`, { token: ws.account.apiKey })).status).toBe(404);
  });

  test("a document deleted while it is processing leaves nothing behind", async () => {
    const ws = await workspace(server);
    const res = await addText(server, ws, { text: "Paragraph about deserts and dunes. ".repeat(3000) });
    const id = res.body.data.id;
    expect((await server.request("DELETE", `${ws.docs}/${id}`, { token: ws.account.apiKey })).status).toBe(200);
    const after = await ingest(server, ws, text("after.txt", "processed after the deleted one"));
    expect(after.status).toBe("ready");
    expect(indexRows(server.server.ctx.db, id)).toEqual({ chunks: 0, vectors: 0});
    expect(server.server.ctx.db.query("SELECT COUNT(*) AS n FROM ingest_jobs WHERE document_id = ?").get(id)).toEqual({ n: 0 });
  });
});

describe("isolation and ids", () => {
  test("another account's knowledge base or document is a 404 on every endpoint", async () => {
    const owner = await workspace(server);
    const doc = await ingest(server, owner, text("secret.txt", "classified"));
    const intruder = await workspace(server, await signup(server));
    const token = intruder.account.apiKey;
    const theirDocs = owner.docs;
    const attempts: [string, string, object][] = [
      ["GET", theirDocs, {}],
      ["POST", `${theirDocs}/text`, { body: { text: "x" } }],
      ["POST", theirDocs, { form: { file: text("a.txt", "x") } }],
      ["GET", `${theirDocs}/${doc.id}`, {}],
      ["GET", `${theirDocs}/${doc.id}/chunks`, {}],
      ["PATCH", `${theirDocs}/${doc.id}`, { body: { metadata: {} } }],
      ["PUT", `${theirDocs}/${doc.id}`, { form: { file: text("a.txt", "x") } }],
      ["DELETE", `${theirDocs}/${doc.id}`, {}],
    ];
    for (const [method, path, options] of attempts) {
      const res = await server.request(method, path, { token, ...options });
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
      expect(res.body.error.message).toBe(`Knowledge base not found: ${owner.kbId}`);
    }
    // Their document id under the intruder's own knowledge base: not found either.
    for (const [method, suffix, options] of [["GET", "", {}], ["GET", "/chunks", {}], ["PATCH", "", { body: { metadata: {} } }], ["DELETE", "", {}]] as const) {
      const res = await server.request(method, `${intruder.docs}/${doc.id}${suffix}`, { token, ...options });
      expect(res.status).toBe(404);
      expect(res.body.error.message).toBe(`Document not found: ${doc.id}`);
    }
    expect((await get(owner, `/${doc.id}`)).body.data.status).toBe("ready");
  });

  test("malformed path ids are 400, unknown ones 404", async () => {
    const ws = await workspace(server);
    expect((await server.request("GET", "/v1/knowledge-bases/nope/documents", { token: ws.account.apiKey })).status).toBe(400);
    expect((await get(ws, "/chk_123")).status).toBe(400);
    const missing = await get(ws, "/doc_0000000000000000000000000");
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toBe("Document not found: doc_0000000000000000000000000");
  });

  test("deleting the knowledge base removes its documents, chunks, vectors and files", async () => {
    const ws = await workspace(server);
    const doc = await ingest(server, ws, text("kb.txt", "The archive holds maps of old trade routes."));
    const rowids = server.server.ctx.db.query<{ rowid: number }, [string]>("SELECT rowid FROM chunks WHERE kb_id = ?").all(ws.kbId).map((r) => r.rowid);
    expect(rowids.length).toBeGreaterThan(0);
    const res = await server.request("DELETE", `/v1/knowledge-bases/${ws.kbId}`, { token: ws.account.apiKey });
    expect(res.status).toBe(200);
    // Gone at once; its rows and files go in the background, right after.
    expect((await server.request("GET", `${ws.docs}/${doc.id}`, { token: ws.account.apiKey })).status).toBe(404);
    await server.server.ctx.deletions.settled();
    const db = server.server.ctx.db;
    expect(db.query("SELECT COUNT(*) AS n FROM documents WHERE kb_id = ?").get(ws.kbId)).toEqual({ n: 0 });
    expect(indexRows(db, doc.id)).toEqual({ chunks: 0, vectors: 0});
    expect(existsSync(join(server.dataDir, "files", ws.kbId))).toBe(false);
    // Its vectors are deleted in the background, soon after.
    await vectorsPurged(db);
    expect(db.query(`SELECT COUNT(*) AS n FROM chunk_vectors WHERE rowid IN (${rowids.join(",")})`).get()).toEqual({ n: 0 });
  });
});
