import { describe, expect, test } from "bun:test";
import { chunkDocument, type ChunkDraft } from "../../src/ingest/chunker.ts";
import type { ParsedDocument, ParsedSection } from "../../src/ingest/parsers/types.ts";

/** Whitespace word count: the chunker's contract only needs a consistent counter. */
const countWords = (text: string) => {
  let count = 0;
  for (const word of text.split(/\s+/)) if (word !== "") count++;
  return count;
};

const OPTIONS = { targetTokens: 120, maxTokens: 160, minTokens: 80, overlapRatio: 0.15 };

/**
 * Prose whose every word is unique and names where it comes from ("s2p3w41": section 2,
 * page 3, word 41), so chunks can be checked word by word. Sentences are 6–14 words,
 * paragraphs 3–6 sentences.
 */
function uniqueProse(section: number, page: number, words: number, firstWord = 0): string {
  const paragraphs: string[] = [];
  let sentences: string[] = [];
  let sentence: string[] = [];
  let sentenceLength = 6;
  for (let w = firstWord; w < firstWord + words; w++) {
    sentence.push(`s${section}p${page}w${w}`);
    if (sentence.length === sentenceLength) {
      sentences.push(`${sentence.join(" ")}.`);
      sentence = [];
      sentenceLength = 6 + ((w * 7) % 9);
      if (sentences.length === 3 + (w % 4)) {
        paragraphs.push(sentences.join(" "));
        sentences = [];
      }
    }
  }
  if (sentence.length > 0) sentences.push(`${sentence.join(" ")}.`);
  if (sentences.length > 0) paragraphs.push(sentences.join(" "));
  return paragraphs.join("\n\n");
}

const bareWords = (text: string) => text.split(/\s+/).map((word) => word.replace(/\.$/, "")).filter(Boolean);
const origin = (word: string) => /^s(\d+)p(\d+)w\d+$/.exec(word);

/** The chunks' words with each chunk's overlap (a repeat of the previous chunk's tail) removed. */
function wordsWithoutOverlap(chunks: ChunkDraft[]): string[] {
  const seen = new Set<string>();
  const words: string[] = [];
  for (const chunk of chunks) {
    for (const word of bareWords(chunk.text)) {
      if (origin(word) && seen.has(word)) continue;
      seen.add(word);
      words.push(word);
    }
  }
  return words;
}

function overlapWords(previous: ChunkDraft, next: ChunkDraft): number {
  const before = new Set(bareWords(previous.text));
  let count = 0;
  for (const word of bareWords(next.text)) {
    if (!before.has(word)) break;
    count++;
  }
  return count;
}

const pagedDoc: ParsedDocument = {
  pageCount: 4,
  sections: [
    { text: uniqueProse(1, 1, 300), page: 1, heading: "Alpha" },
    { text: uniqueProse(1, 2, 250, 300), page: 2, heading: "Alpha" },
    { text: uniqueProse(2, 2, 200), page: 2, heading: "Beta" },
    { text: uniqueProse(3, 3, 420), page: 3, heading: "Gamma" },
    { text: uniqueProse(3, 4, 90, 420), page: 4, heading: "Gamma" },
  ],
};
const HEADINGS: Record<string, string> = { "1": "Alpha", "2": "Beta", "3": "Gamma" };

describe("chunkDocument", () => {
  const chunks = chunkDocument(pagedDoc, countWords, OPTIONS);

  test("chunks are numbered, non-empty, whitespace-normalised, counted with countTokens", () => {
    expect(chunks.length).toBeGreaterThan(5);
    chunks.forEach((chunk, index) => {
      expect(chunk.chunkIndex).toBe(index);
      expect(chunk.text.trim()).not.toBe("");
      expect(chunk.text).not.toMatch(/[ \t]{2,}|^\s|\s$|\n{3,}/);
      expect(chunk.tokenCount).toBe(countWords(chunk.text));
    });
  });

  test("token bounds: never above max; only a section's last chunk may be under min", () => {
    chunks.forEach((chunk, index) => {
      expect(chunk.tokenCount).toBeLessThanOrEqual(OPTIONS.maxTokens);
      const next = chunks[index + 1];
      if (next && next.sectionHeading === chunk.sectionHeading) expect(chunk.tokenCount).toBeGreaterThanOrEqual(OPTIONS.minTokens);
    });
  });

  test("every word appears, in order, unsplit (overlaps aside)", () => {
    // A heading line appears once, where the heading changes.
    const source = pagedDoc.sections.flatMap((section, i) => [
      ...(section.heading !== pagedDoc.sections[i - 1]?.heading ? bareWords(section.heading) : []),
      ...bareWords(section.text),
    ]);
    expect(wordsWithoutOverlap(chunks)).toEqual(source);
  });

  test("consecutive chunks of a section overlap by whole words, about 15 %", () => {
    let overlaps = 0;
    for (let i = 1; i < chunks.length; i++) {
      const [previous, next] = [chunks[i - 1]!, chunks[i]!];
      const overlap = overlapWords(previous, next);
      if (next.sectionHeading !== previous.sectionHeading || next.text.startsWith(next.sectionHeading)) {
        expect(overlap).toBe(0);
        continue;
      }
      overlaps++;
      expect(overlap).toBeGreaterThan(0);
      expect(overlap).toBeLessThanOrEqual(Math.floor(previous.tokenCount * OPTIONS.overlapRatio));
      expect(previous.text.endsWith(bareWords(next.text).slice(0, overlap).join(" ") + ".") ||
        previous.text.endsWith(bareWords(next.text).slice(0, overlap).join(" "))).toBe(true);
    }
    expect(overlaps).toBeGreaterThan(2);
  });

  test("a heading starts a chunk; sectionHeading and pages match the words inside", () => {
    for (const chunk of chunks) {
      const words = bareWords(chunk.text).map(origin).filter((match) => match !== null);
      const pages = words.map((match) => Number(match![2]));
      expect(chunk.startPage).toBe(Math.min(...pages));
      expect(chunk.endPage).toBe(Math.max(...pages));
      expect(chunk.sectionHeading).toBe(HEADINGS[words[0]![1]!]!);
      if (chunk.text.startsWith(`${chunk.sectionHeading}\n\n`)) expect(words[0]![0]).toMatch(/w0$/);
    }
    expect(chunks.filter((chunk) => chunk.startPage !== chunk.endPage).length).toBeGreaterThan(0);
  });

  test("deterministic", () => {
    expect(chunkDocument(pagedDoc, countWords, OPTIONS)).toEqual(chunks);
  });
});

test("a long run of closing brackets or quotes is split in linear time (a hang guard: it took ~60 s at 256K)", () => {
  const text = `${")".repeat(262_144)} end. Next sentence.`;
  const chunks = chunkDocument({ pageCount: null, sections: [{ text, page: null, heading: "" }] }, countWords, OPTIONS);
  expect(chunks.map((chunk) => chunk.text).join(" ")).toContain("Next sentence.");
}, 20_000);

describe("section rules", () => {
  test("sections are never merged, however small: each chunk is cited under the heading its text is under", () => {
    const sections: ParsedSection[] = ["One", "Two", "Three", "Four"].map((heading, index) => ({
      text: uniqueProse(index + 1, index + 1, 15),
      page: index + 1,
      heading,
    }));
    const chunks = chunkDocument({ pageCount: 4, sections }, countWords, OPTIONS);
    expect(chunks.map((chunk) => [chunk.sectionHeading, chunk.startPage, chunk.endPage, chunk.text.slice(0, 12)])).toEqual([
      ["One", 1, 1, "One\n\ns1p1w0 "],
      ["Two", 2, 2, "Two\n\ns2p2w0 "],
      ["Three", 3, 3, "Three\n\ns3p3w"],
      ["Four", 4, 4, "Four\n\ns4p4w0"],
    ]);
  });

  test("headings with no text of their own go with the section after them, whose heading the chunk takes", () => {
    const sections: ParsedSection[] = [
      { text: "", page: 1, heading: "Chapter 1: a long title for the whole chapter" },
      { text: uniqueProse(1, 1, 10), page: 1, heading: "Intro" },
      { text: uniqueProse(2, 1, 10), page: 1, heading: "Setup" },
    ];
    const chunks = chunkDocument({ pageCount: 1, sections }, countWords, OPTIONS);
    expect(chunks.map((chunk) => [chunk.sectionHeading, chunk.text.slice(0, 60)])).toEqual([
      ["Intro", "Chapter 1: a long title for the whole chapter\n\nIntro\n\ns1p1w0"],
      ["Setup", "Setup\n\ns2p1w0 s2p1w1 s2p1w2 s2p1w3 s2p1w4 s2p1w5. s2p1w6 s2p"],
    ]);
  });

  test("text before the first heading is a chunk of its own, with no heading", () => {
    const sections: ParsedSection[] = [
      { text: "pip install orchard", page: 1, heading: "" },
      { text: uniqueProse(1, 1, 40), page: 1, heading: "What to grow" },
      { text: uniqueProse(2, 1, 40), page: 1, heading: "When to prune" },
    ];
    const chunks = chunkDocument({ pageCount: 1, sections }, countWords, OPTIONS);
    expect(chunks.map((chunk) => [chunk.sectionHeading, chunk.text.slice(0, 19)])).toEqual([
      ["", "pip install orchard"],
      ["What to grow", "What to grow\n\ns1p1w"],
      ["When to prune", "When to prune\n\ns2p1"],
    ]);
  });

  test("a section's last sentences stay with the rest of it rather than open a chunk of their own", () => {
    // 130 words of Alpha: past the target of 120, within the maximum of 160.
    const sections: ParsedSection[] = [
      { text: uniqueProse(1, 1, 130), page: 1, heading: "Alpha" },
      { text: uniqueProse(2, 1, 12), page: 1, heading: "Beta" },
      { text: uniqueProse(3, 2, 12), page: 2, heading: "Gamma" },
    ];
    const chunks = chunkDocument({ pageCount: 2, sections }, countWords, OPTIONS);
    expect(chunks.map((chunk) => [chunk.sectionHeading, chunk.startPage, chunk.endPage])).toEqual([["Alpha", 1, 1], ["Beta", 1, 1], ["Gamma", 2, 2]]);
    expect(chunks[0]!.text).toEndWith("s1p1w129.");
    expect(chunks[1]!.text).toStartWith("Beta\n\ns2p1w0");
  });

  test("a section too long to finish within the maximum goes on in the next chunk, under its heading", () => {
    const sections: ParsedSection[] = [
      { text: uniqueProse(1, 1, 200), page: 1, heading: "Alpha" },
      { text: uniqueProse(2, 1, 12), page: 1, heading: "Beta" },
    ];
    const chunks = chunkDocument({ pageCount: 1, sections }, countWords, OPTIONS);
    expect(chunks[0]!.tokenCount).toBeLessThanOrEqual(OPTIONS.maxTokens);
    expect(chunks[1]!.sectionHeading).toBe("Alpha");
    expect(chunks[1]!.text).toContain("s1p1w199.");
  });

  test("a heading-only section (empty text) joins the text after it", () => {
    const chunks = chunkDocument(
      { pageCount: 2, sections: [{ text: "", page: 1, heading: "Title" }, { text: "Body text here.", page: 2, heading: "Title" }] },
      countWords,
      OPTIONS,
    );
    expect(chunks).toEqual([
      { text: "Title\n\nBody text here.", chunkIndex: 0, startPage: 1, endPage: 2, sectionHeading: "Title", tokenCount: 4, metadata: {} },
    ]);
  });

  test("a new slide or sheet always starts a chunk and its metadata is carried", () => {
    const sections: ParsedSection[] = [1, 2, 3].map((slide) => ({ text: `Slide ${slide} text.`, page: slide, heading: "Same", meta: { slide } }));
    const chunks = chunkDocument({ pageCount: 3, sections }, countWords, OPTIONS);
    expect(chunks.map((chunk) => [chunk.metadata, chunk.startPage, chunk.endPage, chunk.text])).toEqual([
      [{ slide: 1 }, 1, 1, "Same\n\nSlide 1 text."],
      [{ slide: 2 }, 2, 2, "Same\n\nSlide 2 text."],
      [{ slide: 3 }, 3, 3, "Same\n\nSlide 3 text."],
    ]);
  });

  test("text formats: pages stay null", () => {
    const chunks = chunkDocument({ pageCount: null, sections: [{ text: uniqueProse(1, 0, 400), page: null, heading: "" }] }, countWords, OPTIONS);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) expect([chunk.startPage, chunk.endPage, chunk.sectionHeading]).toEqual([null, null, ""]);
  });

  test("table lines stay whole and keep their line breaks", () => {
    const rows = Array.from({ length: 60 }, (_, i) => `Name: person${i}; Age: ${20 + i}; City: town${i}`);
    const chunks = chunkDocument({ pageCount: 1, sections: [{ text: rows.join("\n"), page: 1, heading: "Sheet1", meta: { sheet: "Sheet1" } }] }, countWords, OPTIONS);
    for (const chunk of chunks) {
      const lines = chunk.text.split("\n").filter((line) => line !== "Sheet1" && line !== "");
      for (const line of lines.slice(1)) expect(rows).toContain(line); // the first line may be an overlap tail
      expect(chunk.metadata).toEqual({ sheet: "Sheet1" });
    }
  });

  test("whitespace-only input gives no chunks", () => {
    expect(chunkDocument({ pageCount: null, sections: [{ text: " \n\n \t ", page: null, heading: "" }] }, countWords)).toEqual([]);
  });
});

describe("long input", () => {
  test("a sentence longer than a chunk is split between words", () => {
    const words = Array.from({ length: 1000 }, (_, i) => `s1p0w${i}`);
    const chunks = chunkDocument({ pageCount: null, sections: [{ text: words.join(" "), page: null, heading: "" }] }, countWords, OPTIONS);
    for (const chunk of chunks) {
      expect(chunk.tokenCount).toBeLessThanOrEqual(OPTIONS.maxTokens);
      for (const word of bareWords(chunk.text)) expect(word).toMatch(/^s1p0w\d+$/);
    }
    expect(wordsWithoutOverlap(chunks)).toEqual(words);
  });

  test("a single word longer than maxTokens is the only thing ever cut", () => {
    const countByLength = (text: string) => text.split(/\s+/).filter(Boolean).reduce((sum, word) => sum + Math.ceil(word.length / 4), 0);
    const blob = "x".repeat(5000);
    const chunks = chunkDocument({ pageCount: null, sections: [{ text: `before ${blob} after`, page: null, heading: "" }] }, countByLength, OPTIONS);
    for (const chunk of chunks) expect(chunk.tokenCount).toBeLessThanOrEqual(OPTIONS.maxTokens);
    expect(chunks.map((chunk) => chunk.text).join(" ")).toContain("before");
  });

  test("text in scripts without spaces counts a token a character at least, whatever the model says, and is joined as written", () => {
    // The default model counts 1,000 "中" as 2 tokens: counted by it alone, 30,000 made one chunk.
    const modelWithoutPieces = (text: string) => text.split(/\s+/).filter(Boolean).length;
    const chinese = Array.from({ length: 400 }, (_, i) => `第${i}句是这样的中文内容。`).join("");
    const thai = "ภาษาไทยเป็นภาษาที่มีระดับเสียง ".repeat(300).trim();
    for (const text of [chinese, "中".repeat(30_000), thai]) {
      const chunks = chunkDocument({ pageCount: null, sections: [{ text, page: null, heading: "" }] }, modelWithoutPieces, OPTIONS);
      expect(chunks.length).toBeGreaterThan(10);
      for (const chunk of chunks) {
        expect(chunk.tokenCount).toBeLessThanOrEqual(OPTIONS.maxTokens);
        // every piece of the source, as written: no space after a full stop or between the parts of a run
        expect(text).toContain(chunk.text);
      }
    }
  });

  test("the parts of a word cut in pieces join without spaces", () => {
    const countByLength = (text: string) => text.split(/\s+/).filter(Boolean).reduce((sum, word) => sum + Math.ceil(word.length / 4), 0);
    const word = "abcdefghij".repeat(3_000);
    const chunks = chunkDocument({ pageCount: null, sections: [{ text: `Before it ${word} after it.`, page: null, heading: "" }] }, countByLength, OPTIONS);
    for (const chunk of chunks) expect(`Before it ${word} after it.`).toContain(chunk.text);
    expect(chunks.length).toBeGreaterThan(20);
  });

  test("the tokenizer is never given a megabyte-long run (a 1 MB line or base64 blob used gigabytes or overflowed its stack)", () => {
    let longest = 0;
    const countByLength = (text: string) => {
      longest = Math.max(longest, text.length);
      return text.split(/\s+/).filter(Boolean).reduce((sum, word) => sum + Math.ceil(word.length / 4), 0);
    };
    const line = Array.from({ length: 200_000 }, (_, i) => `w${i}`).join(" ");
    const blob = "QUJD".repeat(250_000);
    for (const text of [line, `Attachment follows.\n\n${blob}`]) {
      longest = 0;
      const chunks = chunkDocument({ pageCount: null, sections: [{ text, page: null, heading: "" }] }, countByLength, OPTIONS);
      expect(longest).toBeLessThanOrEqual(8192);
      for (const chunk of chunks) expect(chunk.tokenCount).toBeLessThanOrEqual(OPTIONS.maxTokens);
      expect(chunks.map((chunk) => chunk.text.replace(/\s/g, "")).join("").length).toBeGreaterThanOrEqual(text.replace(/\s/g, "").length);
    }
  });

  test("10 MB of text chunks in a few seconds", () => {
    const paragraph = uniqueProse(1, 1, 150);
    const sections: ParsedSection[] = [];
    let size = 0;
    for (let i = 0; size < 10_000_000; i++) {
      const text = Array.from({ length: 20 }, () => paragraph).join("\n\n");
      sections.push({ text, page: null, heading: `Part ${i}` });
      size += text.length;
    }
    const started = performance.now();
    const chunks = chunkDocument({ pageCount: null, sections }, countWords);
    const elapsed = performance.now() - started;
    console.log(`chunked ${(size / 1e6).toFixed(1)} MB into ${chunks.length} chunks in ${elapsed.toFixed(0)} ms`);
    expect(chunks.length).toBeGreaterThan(1000);
    expect(elapsed).toBeLessThan(10_000);
  });
});
