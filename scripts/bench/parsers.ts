// Parser speed on pathological inputs: for each text parser, inputs built to trigger regex
// backtracking or repeated work (long lines full of unclosed delimiters, runs of whitespace, deep
// nesting, very many cells), parsed and chunked at two sizes. Prints ms per MB; a parser that is
// linear shows about the same ms/MB at both sizes, a quadratic one grows with the size.
//
//   bun scripts/bench/parsers.ts [sizeInBytes ...]     (default: 80000 1000000)
import { chunkDocument } from "../../src/ingest/chunker.ts";
import { parseDocument } from "../../src/ingest/parsers/index.ts";

const sizes = process.argv.slice(2).map(Number);
if (sizes.length === 0) sizes.push(80_000, 1_000_000);

/** `unit` repeated to about `bytes` characters. */
const fill = (unit: string, bytes: number) => unit.repeat(Math.max(1, Math.ceil(bytes / unit.length)));
const prose = (bytes: number) => fill("lorem ipsum dolor sit amet consectetur adipiscing elit ", bytes);

const CASES: Array<{ type: string; name: string; make: (bytes: number) => string }> = [
  { type: "md", name: "one line of prose", make: prose },
  { type: "md", name: "unclosed *emphasis", make: (n) => fill("a *b ", n) },
  { type: "md", name: "unclosed _emphasis", make: (n) => fill("a _b ", n) },
  { type: "md", name: "unclosed **strong", make: (n) => fill("**a ", n) },
  { type: "md", name: "unclosed [ brackets", make: (n) => fill("[", n) },
  { type: "md", name: "unclosed [a]( links", make: (n) => fill("[a](", n) },
  { type: "md", name: "unclosed <a tags", make: (n) => fill("<a", n) },
  { type: "md", name: "unclosed <http:// links", make: (n) => fill("<http://x ", n) },
  { type: "md", name: "spaces then x|", make: (n) => `${fill(" ", n)}x|` },
  { type: "md", name: "heading with inner spaces", make: (n) => `# a${fill(" ", n)}b` },
  { type: "md", name: "nested > quotes", make: (n) => fill(">", n) },
  { type: "md", name: "table rows", make: (n) => fill("| a | b |\n", n) },
  { type: "txt", name: "one line of prose", make: prose },
  { type: "txt", name: "one word (no spaces)", make: (n) => fill("abcdefghij", n) },
  { type: "txt", name: "newline + whitespace runs", make: (n) => fill(`\n${" ".repeat(1000)}x`, n) },
  { type: "txt", name: "lines of whitespace", make: (n) => fill(" \n", n) },
  { type: "html", name: "one long text node", make: (n) => `<p>${prose(n)}</p>` },
  { type: "html", name: "one row of many cells", make: (n) => `<table><tr>${fill("<td>a</td>", n)}</tr></table>` },
  { type: "html", name: "deeply nested divs", make: (n) => fill("<div>", n) },
  { type: "csv", name: "one long field", make: (n) => `a,b\n"${prose(n)}",x\n` },
  { type: "csv", name: "one row of many columns", make: (n) => `${fill("h,", n)}\n${fill("v,", n)}\n` },
  { type: "json", name: "one long string", make: (n) => JSON.stringify({ text: prose(n) }) },
  { type: "json", name: "deeply nested objects", make: (n) => `${fill('{"a":', n / 2)}1${"}".repeat(Math.ceil(n / 10))}` },
  { type: "json", name: "deeply nested arrays", make: (n) => `${"[".repeat(Math.ceil(n / 2))}${"]".repeat(Math.ceil(n / 2))}` },
];

const countTokens = (text: string) => Math.ceil(text.length / 4);
console.log(`${"type".padEnd(5)} ${"input".padEnd(28)} ${sizes.map((size) => `${(size / 1e6).toFixed(2)} MB: ms/MB`.padStart(20)).join("")}  outcome`);
for (const { type, name, make } of CASES) {
  let outcome = "";
  const cells: string[] = [];
  for (const size of sizes) {
    const text = make(size);
    const data = new TextEncoder().encode(text);
    const start = performance.now();
    try {
      chunkDocument(await parseDocument(type, data, `bench.${type}`), countTokens);
      outcome = "parsed";
    } catch (error) {
      outcome = `failed: ${(error as Error).message.slice(0, 60)}`;
    }
    const ms = performance.now() - start;
    cells.push(`${(ms / (data.length / 1e6)).toFixed(0)} (${ms.toFixed(0)} ms)`.padStart(20));
  }
  console.log(`${type.padEnd(5)} ${name.padEnd(28)} ${cells.join("")}  ${outcome}`);
}
