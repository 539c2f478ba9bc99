// Documents for the ingestion tests: generated fixtures (scripts/gen-fixtures.ts) and the
// real-world samples in ../shared/fixtures/docs next to the repository.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export interface Phrase {
  /** Text that must appear (case and whitespace aside) in the parsed document. */
  text: string;
  /** Page it must be on (null for text formats). */
  page: number | null;
  /** Heading it must be under, when the format has headings. */
  heading?: string;
}

export interface DocumentFixture {
  file: string;
  type: string;
  pageCount: number | null;
  phrases: Phrase[];
  /** Read by OCR: phrases are short and in a large clean font. */
  ocr?: boolean;
  /** Text that must NOT appear (boilerplate the parser should drop). */
  absent?: string[];
}

export interface RejectedFixture {
  file: string;
  type: string;
  /** The ParseError message (a prefix, for messages that carry a library's reason). */
  error: string;
}

export interface FixtureManifest {
  /** Hash of the generator that wrote the files; a different one means they are stale. */
  generator: string;
  /** Absolute folder of the files. */
  dir: string;
  documents: DocumentFixture[];
  rejected: RejectedFixture[];
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const FIXTURES_DIR = join(ROOT, "test", ".generated", "fixtures");
/** The generator and the encoder it uses: a change to either writes the fixtures again. */
const GENERATOR_FILES = ["gen-fixtures.ts", "grey-jpeg.ts"].map((file) => join(ROOT, "scripts", file));
export const SHARED_SAMPLES_DIR = join(ROOT, "..", "shared", "fixtures", "docs");

type Generate = (dir: string) => Promise<Pick<FixtureManifest, "documents" | "rejected">>;

/** The generator, loaded only when it has to run (its libraries take a second to import). */
const loadAndGenerate: Generate = async (dir) => (await import("../scripts/gen-fixtures.ts")).generateFixtures(dir);

/**
 * The generated fixtures, generating them first when they are missing or were written by another
 * version of the generator.
 */
export async function ensureFixtures(generate: Generate = loadAndGenerate): Promise<FixtureManifest> {
  const generator = Bun.hash(GENERATOR_FILES.map((file) => readFileSync(file, "utf8")).join("\n")).toString(16);
  const manifestPath = join(FIXTURES_DIR, "manifest.json");
  if (existsSync(manifestPath)) {
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as FixtureManifest;
    if (manifest.generator === generator) return { ...manifest, dir: FIXTURES_DIR };
  }
  // Written next to the final folder and renamed into place, so concurrent test processes never
  // see a half-written set.
  const staging = `${FIXTURES_DIR}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const manifest: FixtureManifest = { generator, dir: FIXTURES_DIR, ...(await generate(staging)) };
  writeFileSync(join(staging, "manifest.json"), JSON.stringify(manifest, null, 2));
  rmSync(FIXTURES_DIR, { recursive: true, force: true });
  try {
    renameSync(staging, FIXTURES_DIR);
  } catch {
    rmSync(staging, { recursive: true, force: true }); // another process got there first
  }
  return manifest;
}

/** The shared real-world samples (from the Haystack test suite) with what they must yield. */
export const SHARED_SAMPLES: DocumentFixture[] = [
  {
    file: "pdf/sample_pdf_1.pdf",
    type: "pdf",
    pageCount: 4,
    phrases: [
      { text: "Adobe Systems made the PDF specification available free of charge in 1993", page: 1, heading: "A sample PDF file" },
      { text: "the page 3 is empty", page: 4, heading: "Page 4 of Sample PDF" },
    ],
  },
  { file: "pdf/non_text_searchable.pdf", type: "pdf", pageCount: 1, ocr: true, phrases: [{ text: "example of a non-text-searchable PDF", page: 1 }] },
  {
    file: "pdf/react_paper.pdf",
    type: "pdf",
    pageCount: 31,
    phrases: [
      { text: "A unique feature of human intelligence is the ability to seamlessly combine", page: 1, heading: "1 INTRODUCTION" },
      { text: "We begin with knowledge-intensive reasoning tasks", page: 4, heading: "3 KNOWLEDGE-INTENSIVE REASONING TASKS" },
      // Compounds broken at a line's end keep their hyphen, and no space after it.
      { text: "competitive with chain-of-thought reasoning (CoT)", page: 3 },
      { text: "using PaLM-540B as the base model", page: 5 },
    ],
  },
  { file: "images/image_metadata.png", type: "png", pageCount: 1, ocr: true, phrases: [{ text: "Live Music Performance", page: 1 }] },
  {
    file: "docx/sample_docx_1.docx",
    type: "docx",
    pageCount: 4,
    phrases: [{ text: "Adobe Systems made the PDF specification available free of", page: 1, heading: "A sample PDF file" }],
  },
  {
    file: "pptx/sample_pptx.pptx",
    type: "pptx",
    pageCount: 2,
    phrases: [
      { text: "Jane Doe", page: 1, heading: "Sample Title Slide" },
      { text: "This is another bullet point", page: 2, heading: "Title of First Slide" },
    ],
  },
  {
    file: "xlsx/basic_tables_two_sheets.xlsx",
    type: "xlsx",
    pageCount: 2,
    phrases: [
      { text: "col_a: 1.5; col_b: test", page: 1, heading: "Basic Table" },
      { text: "col_c: TRUE", page: 2, heading: "Table Missing Value" },
    ],
  },
  {
    file: "xlsx/multiple_tables.xlsx",
    type: "xlsx",
    pageCount: 1,
    phrases: [
      { text: "col_a: 1.5; col_b: test", page: 1, heading: "Sheet1" },
      { text: "col_c: 3; col_d: TRUE", page: 1, heading: "Sheet1" },
    ],
  },
  { file: "csv/sample_1.csv", type: "csv", pageCount: null, phrases: [{ text: "Name: Jane Smith; Age: 37", page: null }] },
  {
    file: "markdown/sample.md",
    type: "md",
    pageCount: null,
    phrases: [{ text: "Latest models: Utilize all latest transformer based models", page: null, heading: "Core Features" }],
  },
  {
    file: "html/what_is_haystack.html",
    type: "html",
    pageCount: null,
    phrases: [{ text: "At the core of Haystack are its components", page: null, heading: "Components" }],
  },
];
