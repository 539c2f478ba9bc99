// Messages between an ingestion worker (parse-process.ts) and its parser child process (parse-child.ts),
// over Bun's IPC channel. The child reads the stored file itself, so only paths and results cross.
import type { ParsedDocument } from "./parsers/index.ts";
import type { PageAllowance } from "./parsers/page-limit.ts";

export interface ParseRequest {
  requestId: number;
  /** Absolute path of the stored file. */
  path: string;
  fileType: string;
  fileName: string;
  /** The account's pages left (limits on): a document with more fails as soon as they are counted. */
  allowance: PageAllowance | null;
}

export type ParseReply =
  | { requestId: number; ok: true; parsed: ParsedDocument }
  /** `message` is a ParseError's (for the user); `cause` is the library failure behind it, for the log. */
  | { requestId: number; ok: false; message: string; pageCount: number | null; cause: string | null };

/** The child's first message: its parsers are loaded and it takes requests. */
export interface ChildReady {
  ready: true;
}

/** The hidden `quarry` command that runs a parser child (see src/main.ts). */
export const PARSE_CHILD_COMMAND = "__parse-child";
