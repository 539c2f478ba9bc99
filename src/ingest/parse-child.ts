// The parser child process (`quarry __parse-child`): parses one stored file at a time for the ingestion
// worker that started it. Untrusted files are parsed here rather than in the server, so a file that
// exhausts memory or never finishes costs only this process, which the worker kills (parse-process.ts).
import { readFileSync } from "node:fs";
import { ParseError, parseDocument } from "./parsers/index.ts";
import { setPageAllowance } from "./parsers/page-limit.ts";
import type { ChildReady, ParseReply, ParseRequest } from "./parse-protocol.ts";

export function runParseChild(): void {
  if (!process.send) throw new Error("The parser child must be started by an ingestion worker (no IPC channel)");
  const send = (message: ParseReply | ChildReady) => process.send!(message);
  // Results go back over IPC; what the parsing libraries print is their debugging (utif2 prints a
  // "==== 4 6" line for every tiled TIFF), which would land in the server's log. Warnings and errors stay.
  console.log = console.info = console.debug = () => {};
  // The worker is gone (the server stopped or was killed): nothing will read the results.
  process.on("disconnect", () => process.exit(0));
  // Ctrl-C in a terminal signals the whole process group: it is for the server, whose graceful stop ends
  // this process itself once the document in hand is given back. Killed by it here, the document counted
  // an attempt (parse-process.ts ParserKilled).
  process.on("SIGINT", () => {});
  process.on("message", async (request: ParseRequest) => {
    try {
      const buffer = readFileSync(request.path);
      const data = new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength); // pdf.js refuses Node Buffers
      setPageAllowance(request.allowance);
      send({ requestId: request.requestId, ok: true, parsed: await parseDocument(request.fileType, data, request.fileName) });
    } catch (error) {
      const parseError = error instanceof ParseError ? error : null;
      const cause = parseError ? parseError.cause : error;
      send({
        requestId: request.requestId,
        ok: false,
        message: parseError?.message ?? `Processing failed: ${(error as Error)?.message ?? String(error)}`,
        pageCount: parseError?.pageCount ?? null,
        cause: cause === undefined ? null : String((cause as Error)?.stack ?? cause),
      });
    }
  });
  send({ ready: true });
}
