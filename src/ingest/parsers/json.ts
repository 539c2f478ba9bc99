import { SectionCollector } from "./section-collector.ts";
import { decodeText } from "./text-decode.ts";
import { ParseError, type ParsedDocument } from "./types.ts";
import { cleanLine } from "./text-cleanup.ts";

/**
 * JSON → readable "path.to.key: value" lines, one paragraph per top-level key or array item; an array of
 * plain values is one line, "tags: a, b" (a line per item repeated its path: 24 KB of one long key over
 * 11,500 numbers became 23,001 chunks). Walked with an explicit stack so deeply nested input cannot
 * overflow the call stack.
 */
export async function parseJson(data: Uint8Array): Promise<ParsedDocument> {
  const text = decodeText(data);
  let value: unknown;
  try {
    // Numbers as written: a double would turn an id such as 1234567890123456789 into …800.
    value = JSON.parse(text, (_key, parsed, context?: { source?: string }) => (typeof parsed === "number" && context?.source !== undefined ? context.source : parsed));
  } catch (error) {
    throw new ParseError(`Not valid JSON: ${shortReason(error)}`);
  }
  const collector = new SectionCollector();
  const topLevel: Array<[string, unknown]> = isContainer(value)
    ? Object.entries(value).map(([key, child]) => [childPath("", key, value), child])
    : [["", value]];
  for (const [path, child] of topLevel) collector.addParagraph(leafLines(path, child).join("\n"));
  return { pageCount: null, sections: collector.finish() };
}

function leafLines(rootPath: string, root: unknown): string[] {
  const lines: string[] = [];
  const stack: Array<[string, unknown]> = [[rootPath, root]];
  while (stack.length > 0) {
    const [path, value] = stack.pop()!;
    if (Array.isArray(value) && value.length > 0 && !value.some(isContainer)) {
      const text = value.filter((item) => item !== null && item !== "").map((item) => cleanLine(String(item))).join(", ");
      if (text !== "") lines.push(path === "" ? text : `${path}: ${text}`);
    } else if (isContainer(value)) {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) stack.push([childPath(path, entries[i]![0], value), entries[i]![1]]);
    } else if (value !== null && value !== "") {
      const text = cleanLine(String(value));
      lines.push(path === "" ? text : `${path}: ${text}`);
    }
  }
  return lines;
}

function isContainer(value: unknown): value is Record<string, unknown> | unknown[] {
  return typeof value === "object" && value !== null;
}

function childPath(parent: string, key: string, container: unknown): string {
  if (Array.isArray(container)) return `${parent}[${key}]`;
  return parent === "" ? key : `${parent}.${key}`;
}

function shortReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^JSON Parse error:\s*/i, "").slice(0, 120);
}
