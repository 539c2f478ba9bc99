// Generates the document fixtures the tests ingest: at least one real file of every supported
// extension, each about its own topic (and a different one per page), plus damaged files that
// must be rejected with a known message. test/fixtures.ts runs it on demand (when the outputs
// are missing or this file has changed) into test/.generated/fixtures/, with manifest.json.
//
//   node_modules/.bin/bun scripts/gen-fixtures.ts
import { createCanvas, GlobalFonts } from "@napi-rs/canvas";
import { Document, HeadingLevel, Packer, Paragraph } from "docx";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PDFDict, PDFDocument, PDFName, StandardFonts, type PDFFont } from "pdf-lib";
import PDFKit from "pdfkit";
import PptxGenJS from "pptxgenjs";
import * as UTIF from "utif2";
import { greyJpeg } from "./grey-jpeg.ts";
import * as XLSX from "@e965/xlsx";
import { ensureFixtures, type DocumentFixture, type FixtureManifest, type Phrase, type RejectedFixture } from "../test/fixtures.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

// Fonts shipped with pdfjs-dist, so rendered images look the same on every machine.
const FONT_DIR = join(ROOT, "node_modules", "pdfjs-dist", "standard_fonts");
GlobalFonts.registerFromPath(join(FONT_DIR, "LiberationSans-Regular.ttf"), "Fixture Sans");

const REPORT_PAGES = [
  {
    heading: "Glacier Dynamics",
    body: [
      "Glacial ice flows under its own weight once it grows thick enough to deform. Temperate glaciers slide over a film of meltwater at their base, while polar glaciers stay frozen to the bedrock.",
      "Crevasses open where the ice stretches over a steepening slope, and moraines of ground rock mark the furthest advance of the ice front.",
    ],
    phrase: "glacial ice flows under its own weight",
  },
  {
    heading: "Volcanic Basalt Formations",
    body: [
      "Columnar jointing in volcanic basalt formations appears when a thick lava flow cools slowly and contracts into hexagonal columns.",
      "Pillow basalts form instead when lava erupts under water, and flood basalts can cover whole provinces with layer upon layer of dark rock.",
    ],
    phrase: "columnar jointing in volcanic basalt formations",
  },
  {
    heading: "Coral Reef Ecology",
    body: [
      "Reef-building corals depend on symbiotic zooxanthellae, algae that live in their tissue and supply most of their energy through photosynthesis.",
      "When the water stays too warm for weeks the corals expel the algae and bleach, and a bleached reef recovers only if the heat stress ends soon.",
    ],
    phrase: "symbiotic zooxanthellae",
  },
];

const DOCX_SECTIONS = [
  { heading: "Beekeeping Basics", phrase: "a colony needs a laying queen", topic: "A colony needs a laying queen, thousands of workers and enough stored honey to survive the winter." },
  { heading: "Hive Inspection", phrase: "check the brood frames for capped cells", topic: "During each inspection check the brood frames for capped cells and signs of disease or mites." },
  { heading: "Honey Harvest", phrase: "extract the honey with a centrifugal extractor", topic: "Once the frames are capped, uncap them with a warm knife and extract the honey with a centrifugal extractor." },
];
const DOCX_FILLER_SENTENCES = 24;

const SLIDES = [
  { title: "Solar Panel Maintenance", body: "Clean the photovoltaic modules twice a year", notes: "Remind the crew to inspect the inverter monthly." },
  { title: "Wind Turbine Blades", body: "Leading edge erosion reduces blade efficiency", notes: "Show the drone footage of the blade repair." },
  { title: "Battery Storage Safety", body: "Lithium iron phosphate cells resist thermal runaway", notes: "Mention the fire suppression system in the container." },
];

const IMAGES = [
  { file: "submarine-cable.png", type: "png", lines: ["Submarine cable repair", "ship leaves harbour at dawn"], phrase: "submarine cable repair" },
  { file: "orchard.jpg", type: "jpg", lines: ["Orchard apple harvest", "begins in late September"], phrase: "orchard apple harvest" },
  { file: "tugboat.jpeg", type: "jpeg", lines: ["Harbour tugboat schedule", "departures every hour"], phrase: "harbour tugboat schedule" },
  { file: "cactus.webp", type: "webp", lines: ["Desert cactus bloom", "opens only at night"], phrase: "desert cactus bloom" },
];
/** Pages stored in ways utif2 alone got wrong: greyscale JPEG (decoded three times too wide), CMYK (it threw). */
const STORED_TIFF_PAGES = [
  { file: "pilot-roster.tiff", storage: "jpeg", lines: ["Harbour pilot roster", "night shifts rotate weekly"], phrase: "harbour pilot roster" },
  { file: "print-proof.tiff", storage: "cmyk", lines: ["Print proof approved", "ink coverage checked"], phrase: "print proof approved" },
] as const;
const TIFF_FRAMES = [
  { lines: ["Railway timetable", "platform four"], phrase: "railway timetable" },
  { lines: ["Museum opening hours", "closed on Mondays"], phrase: "museum opening hours" },
];

/** Writes every fixture into `dir` and describes them. */
export async function generateFixtures(dir: string): Promise<Pick<FixtureManifest, "documents" | "rejected">> {
  const documents: DocumentFixture[] = [];
  const rejected: RejectedFixture[] = [];
  const write = (file: string, data: Uint8Array | string) => {
    writeFileSync(join(dir, file), data);
    return typeof data === "string" ? new TextEncoder().encode(data) : data;
  };

  // PDF with a text layer: one topic per page, headings in a larger font.
  const reportPdf = write("report.pdf", await reportPdfBytes());
  documents.push({
    file: "report.pdf",
    type: "pdf",
    pageCount: REPORT_PAGES.length,
    phrases: REPORT_PAGES.map((page, index) => ({ text: page.phrase, page: index + 1, heading: page.heading })),
  });

  // Scanned PDF: the page is an image, no text layer.
  write("scanned.pdf", await scannedPdfBytes([["Lighthouse keeper logbook", "the lamp was trimmed at dusk"]]));
  documents.push({ file: "scanned.pdf", type: "pdf", pageCount: 1, ocr: true, phrases: [{ text: "lighthouse keeper logbook", page: 1 }] });

  // Landscape pages scanned on their side: the text runs up the page images. The second page is read
  // turned at once, as the first one had to be.
  const sideways = [["Glacier survey notes", "crevasse depth measured at noon"], ["Avalanche beacon checks", "batteries replaced before dawn"]];
  write("sideways-scan.pdf", await scannedPdfBytes(sideways, true));
  documents.push({
    file: "sideways-scan.pdf",
    type: "pdf",
    pageCount: 2,
    ocr: true,
    phrases: [
      { text: "glacier survey notes", page: 1 },
      { text: "avalanche beacon checks", page: 2 },
    ],
  });

  // A font without a Unicode map: the page shows text that cannot be extracted, so it is read by OCR.
  write("unmapped-font.pdf", await unmappedFontPdfBytes("Tidal gauge readings were logged every ten minutes at the pier."));
  documents.push({ file: "unmapped-font.pdf", type: "pdf", pageCount: 1, ocr: true, phrases: [{ text: "tidal gauge readings", page: 1 }] });

  // A page that reads fine but for a figure set in a font without a Unicode map: the figure's area is read by OCR.
  write(
    "unmapped-figure.pdf",
    await unmappedFigurePdfBytes(
      "Harbour pilots board incoming ships two miles offshore and guide them through the channel to the berth. ".repeat(3),
      "Figure 2: buoy positions charted at low water",
    ),
  );
  documents.push({
    file: "unmapped-figure.pdf",
    type: "pdf",
    pageCount: 1,
    ocr: true,
    phrases: [
      { text: "harbour pilots board incoming ships", page: 1 },
      { text: "buoy positions charted at low water", page: 1 },
    ],
  });

  // An owner password only restricts permissions; anyone can open and read the file.
  write("permissions-only.pdf", await pdfKitBytes("Lunar regolith samples are stored in nitrogen cabinets.", { ownerPassword: "owner-secret" }));
  documents.push({ file: "permissions-only.pdf", type: "pdf", pageCount: 1, phrases: [{ text: "lunar regolith samples", page: 1 }] });

  const docx = await docxBytes();
  write("guide.docx", docx.bytes);
  documents.push({ file: "guide.docx", type: "docx", pageCount: docx.pageCount, phrases: docx.phrases });

  write("deck.pptx", await pptxBytes());
  documents.push({
    file: "deck.pptx",
    type: "pptx",
    pageCount: SLIDES.length,
    phrases: SLIDES.flatMap((slide, index) => [
      { text: slide.body, page: index + 1, heading: slide.title },
      { text: slide.notes, page: index + 1, heading: slide.title },
    ]),
  });

  const budget = write("budget.xlsx", xlsxBytes());
  documents.push({
    file: "budget.xlsx",
    type: "xlsx",
    pageCount: 2,
    phrases: [
      { text: "Region: Northern Territory; Quarter: Q3; Amount: 48200", page: 1, heading: "Revenue" },
      { text: "Category: Office chairs; Vendor: Ergonomica; Cost: 3150", page: 2, heading: "Expenses" },
    ],
  });

  const imageBytes = new Map<string, Uint8Array>();
  for (const image of IMAGES) {
    imageBytes.set(image.type, write(image.file, await textImage(image.lines, image.type === "png" ? "png" : image.type === "webp" ? "webp" : "jpeg")));
    documents.push({ file: image.file, type: image.type, pageCount: 1, ocr: true, phrases: [{ text: image.phrase, page: 1 }] });
  }
  write("timetable.tiff", pageTiff(TIFF_FRAMES.map((frame) => textPixels(frame.lines))));
  documents.push({
    file: "timetable.tiff",
    type: "tiff",
    pageCount: TIFF_FRAMES.length,
    ocr: true,
    phrases: TIFF_FRAMES.map((frame, index) => ({ text: frame.phrase, page: index + 1 })),
  });
  for (const page of STORED_TIFF_PAGES) {
    write(page.file, pageTiff([textPixels(page.lines)], page.storage));
    documents.push({ file: page.file, type: "tiff", pageCount: 1, ocr: true, phrases: [{ text: page.phrase, page: 1 }] });
  }

  write("sourdough.txt", [
    "Sourdough starter fermentation takes about a week at room temperature.",
    "Feed the starter with equal weights of flour and water every day,\nand discard half before each feeding.",
    "A ripe starter doubles in volume within six hours and smells pleasantly sour.",
  ].join("\n\n"));
  documents.push({ file: "sourdough.txt", type: "txt", pageCount: null, phrases: [{ text: "sourdough starter fermentation", page: null }, { text: "every day, and discard half", page: null }] });

  write("telescope.md", [
    "# Backyard Astronomy", "", "A small **refracting telescope** is enough to see the rings of Saturn.", "",
    "Telescope Alignment", "-------------------", "", "Align the *finder scope* with a distant church spire during the day.", "",
    "```", "polar_align --latitude 52.1", "```", "", "## Observing Log", "", "- Jupiter's moons on the first night", "- The [Orion Nebula](https://example.org/m42) in winter", "",
  ].join("\n"));
  documents.push({
    file: "telescope.md",
    type: "md",
    pageCount: null,
    phrases: [
      { text: "a small refracting telescope is enough", page: null, heading: "Backyard Astronomy" },
      { text: "align the finder scope with a distant church spire", page: null, heading: "Telescope Alignment" },
      { text: "polar_align --latitude 52.1", page: null, heading: "Telescope Alignment" },
      { text: "the orion nebula in winter", page: null, heading: "Observing Log" },
    ],
  });

  write("birds.html", [
    "<!doctype html><html><head><title>Migratory Birds</title><style>body { color: red }</style>",
    "<script>var trackingBoilerplate = 1;</script></head><body>",
    "<header><nav><a href='/'>Home navigation boilerplate</a></nav></header>",
    "<main><h1>Migratory Birds</h1><p>Many species fly south before the first frost &amp; return in spring.</p>",
    "<h2>Arctic Tern Routes</h2><p>The arctic tern travels from pole to pole,<br>about seventy thousand kilometres a year.</p>",
    "<ul><li>Greenland</li><li>Weddell Sea</li></ul></main>",
    "<footer>Copyright footer boilerplate</footer></body></html>",
  ].join("\n"));
  documents.push({
    file: "birds.html",
    type: "html",
    pageCount: null,
    phrases: [
      { text: "fly south before the first frost & return in spring", page: null, heading: "Migratory Birds" },
      { text: "the arctic tern travels from pole to pole", page: null, heading: "Arctic Tern Routes" },
    ],
    absent: ["navigation boilerplate", "footer boilerplate", "trackingBoilerplate", "color: red"],
  });

  // Latin-1 bytes (not valid UTF-8), as older pages were saved.
  write("cafe.htm", latin1("<html><body><h1>Café crème</h1><p>Our café serves crème brûlée every Sunday.</p></body></html>"));
  documents.push({ file: "cafe.htm", type: "htm", pageCount: null, phrases: [{ text: "our café serves crème brûlée every sunday", page: null, heading: "Café crème" }] });

  write("cities.csv", "City,Country,Population\nReykjavik,Iceland,139875\n\"Wellington, Central\",New Zealand,215400\n");
  documents.push({
    file: "cities.csv",
    type: "csv",
    pageCount: null,
    phrases: [{ text: "City: Reykjavik; Country: Iceland; Population: 139875", page: null }, { text: "City: Wellington, Central; Country: New Zealand", page: null }],
  });

  write("inventory.tsv", "Item\tQuantity\tWarehouse\nTitanium bolts\t1200\tRotterdam\nCopper wire\t85\tGdansk\n");
  documents.push({ file: "inventory.tsv", type: "tsv", pageCount: null, phrases: [{ text: "Item: Titanium bolts; Quantity: 1200; Warehouse: Rotterdam", page: null }] });

  write("service.json", JSON.stringify({ service: "tide-gauge", database: { host: "db.internal", replicas: [{ region: "north-sea" }, { region: "baltic" }] }, alerts: { enabled: true } }, null, 2));
  documents.push({
    file: "service.json",
    type: "json",
    pageCount: null,
    phrases: [{ text: "database.host: db.internal", page: null }, { text: "database.replicas[1].region: baltic", page: null }, { text: "alerts.enabled: true", page: null }],
  });

  // Files that must be rejected.
  const garbage = (length: number, seed: number) => {
    const bytes = new Uint8Array(length);
    let state = seed;
    for (let i = 0; i < length; i++) bytes[i] = (state = (state * 1103515245 + 12345) >>> 0) >>> 24;
    return bytes;
  };
  const withPrefix = (prefix: number[] | string, rest: Uint8Array) => {
    const head = typeof prefix === "string" ? new TextEncoder().encode(prefix) : new Uint8Array(prefix);
    const bytes = new Uint8Array(head.length + rest.length);
    bytes.set(head);
    bytes.set(rest, head.length);
    return bytes;
  };
  const reject = (file: string, type: string, error: string, data: Uint8Array | string) => {
    write(file, data);
    rejected.push({ file, type, error });
  };
  reject("corrupt.pdf", "pdf", "Not a valid PDF file", withPrefix("%PDF-1.7\n", garbage(4096, 1)));
  reject("truncated.pdf", "pdf", "Not a valid PDF file", reportPdf.slice(0, 400));
  reject("encrypted.pdf", "pdf", "PDF is encrypted", await pdfKitBytes("This text is behind a password.", { userPassword: "reader-secret", ownerPassword: "owner-secret" }));
  reject("too-many-pages.pdf", "pdf", "Document has 501 pages; the limit is 500", await blankPdfBytes(501));
  reject("corrupt.docx", "docx", "Not a valid DOCX file", docx.bytes.slice(0, Math.floor(docx.bytes.length / 2)));
  reject("corrupt.pptx", "pptx", "Not a valid PPTX file", withPrefix([0x50, 0x4b, 0x03, 0x04], garbage(2048, 2)));
  reject("corrupt.xlsx", "xlsx", "Not a valid XLSX file", budget.slice(0, Math.floor(budget.length / 2)));
  // Real image headers (so the size check passes) followed by garbage instead of pixel data.
  const damaged = (type: string, seed: number) => withPrefix([...imageBytes.get(type)!.slice(0, 64)], garbage(2048, seed));
  reject("corrupt.png", "png", "Not a valid PNG image", damaged("png", 3));
  reject("corrupt.jpg", "jpg", "Not a valid JPEG image", damaged("jpg", 4));
  reject("corrupt.jpeg", "jpeg", "Not a valid JPEG image", garbage(2048, 5));
  reject("corrupt.webp", "webp", "Not a valid WEBP image", damaged("webp", 6));
  reject("corrupt.tiff", "tiff", "Not a valid TIFF image", withPrefix([0x49, 0x49, 0x2a, 0x00, 0xff, 0xff, 0x00, 0x00], garbage(2048, 7)));
  reject("invalid.json", "json", "Not valid JSON: ", '{"service": "tide-gauge",, }');

  return { documents, rejected };
}

async function reportPdfBytes(): Promise<Uint8Array> {
  const pdf = await PDFDocument.create({ updateMetadata: false });
  const body = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  for (const content of REPORT_PAGES) {
    const page = pdf.addPage([612, 792]);
    let y = 720;
    page.drawText(content.heading, { x: 72, y, size: 20, font: bold });
    y -= 36;
    for (const paragraph of content.body) {
      for (const line of wrap(paragraph, body, 11, 468)) {
        page.drawText(line, { x: 72, y, size: 11, font: body });
        y -= 15;
      }
      y -= 12;
    }
  }
  return pdf.save();
}

/** One scanned page per entry of `pages` (its lines). */
async function scannedPdfBytes(pages: string[][], sideways = false): Promise<Uint8Array> {
  const pdf = await PDFDocument.create({ updateMetadata: false });
  for (const lines of pages) {
    const image = await pdf.embedPng(await (sideways ? sidewaysTextPng(lines, 1275, 1650) : textImage(lines, "png", 1275, 1650)));
    pdf.addPage([612, 792]).drawImage(image, { x: 0, y: 0, width: 612, height: 792 });
  }
  return pdf.save();
}

async function blankPdfBytes(pages: number): Promise<Uint8Array> {
  const pdf = await PDFDocument.create({ updateMetadata: false });
  for (let i = 0; i < pages; i++) pdf.addPage([612, 792]);
  return pdf.save();
}

/** pdf-lib cannot encrypt; pdfkit writes the standard security handler. */
function pdfKitBytes(text: string, security: { userPassword?: string; ownerPassword?: string } = {}, fontPath?: string): Promise<Uint8Array> {
  return pdfKitDocument((doc) => {
    if (fontPath) doc.font(fontPath);
    doc.fontSize(14).text(text);
  }, security);
}

function pdfKitDocument(draw: (doc: PDFKit.PDFDocument) => void, security: { userPassword?: string; ownerPassword?: string } = {}): Promise<Uint8Array> {
  const doc = new PDFKit({ ...security, pdfVersion: "1.4", info: { CreationDate: new Date(0) } });
  const parts: Buffer[] = [];
  doc.on("data", (part: Buffer) => parts.push(part));
  const done = new Promise<Uint8Array>((resolve) => doc.on("end", () => resolve(new Uint8Array(Buffer.concat(parts)))));
  draw(doc);
  doc.end();
  return done;
}

/** The PDF with every ToUnicode map removed: text in its embedded fonts shows, but does not come out as text. */
async function withoutUnicodeMaps(bytes: Uint8Array): Promise<Uint8Array> {
  const pdf = await PDFDocument.load(bytes);
  for (const [, object] of pdf.context.enumerateIndirectObjects()) {
    if (object instanceof PDFDict) object.delete(PDFName.of("ToUnicode"));
  }
  return pdf.save();
}

/** Text in an embedded TrueType font without a Unicode map. */
async function unmappedFontPdfBytes(text: string): Promise<Uint8Array> {
  return withoutUnicodeMaps(await pdfKitBytes(text, {}, join(FONT_DIR, "LiberationSans-Regular.ttf")));
}

/** Body text in Helvetica (mapped by its standard encoding), then a figure line in an embedded TrueType font without a Unicode map. */
async function unmappedFigurePdfBytes(body: string, figure: string): Promise<Uint8Array> {
  const bytes = await pdfKitDocument((doc) => {
    doc.font("Helvetica").fontSize(12).text(body).moveDown(2);
    doc.font(join(FONT_DIR, "LiberationSans-Regular.ttf")).fontSize(11).text(figure);
  });
  return withoutUnicodeMaps(bytes);
}

function wrap(text: string, font: PDFFont, size: number, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    const candidate = line === "" ? word : `${line} ${word}`;
    if (line !== "" && font.widthOfTextAtSize(candidate, size) > width) {
      lines.push(line);
      line = word;
    } else line = candidate;
  }
  if (line !== "") lines.push(line);
  return lines;
}

/**
 * A Word document long enough to span several pages, one heading per topic, with no page breaks:
 * the parser counts a page per 2,400 characters of text and places every paragraph by its word
 * offset; the expected pages here follow the same documented rule.
 */
async function docxBytes(): Promise<{ bytes: Uint8Array; pageCount: number; phrases: Phrase[] }> {
  const children: Paragraph[] = [];
  const topicOffsets: number[] = [];
  let words = 0;
  let chars = 0;
  for (const section of DOCX_SECTIONS) {
    children.push(new Paragraph({ text: section.heading, heading: HeadingLevel.HEADING_1 }));
    chars += section.heading.length;
    topicOffsets.push(words);
    const paragraphs = [section.topic];
    for (let i = 1; i <= DOCX_FILLER_SENTENCES; i++) {
      paragraphs.push(`Note ${i} on ${section.heading.toLowerCase()}: keep records of every visit, the weather, and what you observed in the apiary that day.`);
    }
    for (const text of paragraphs) {
      children.push(new Paragraph({ text }));
      words += text.split(/\s+/).length;
      chars += text.length;
    }
  }
  const pageCount = Math.ceil(chars / 2400);
  const phrases = DOCX_SECTIONS.map((section, index) => ({
    text: section.phrase,
    page: Math.floor(topicOffsets[index]! / (words / pageCount)) + 1,
    heading: section.heading,
  }));
  const doc = new Document({ creator: "Quarry fixtures", sections: [{ children }] });
  return { bytes: new Uint8Array(await Packer.toBuffer(doc)), pageCount, phrases };
}

async function pptxBytes(): Promise<Uint8Array> {
  const deck = new PptxGenJS();
  deck.defineSlideMaster({
    title: "TITLE_AND_BODY",
    objects: [
      { placeholder: { options: { name: "title", type: "title", x: 0.5, y: 0.3, w: 9, h: 1 }, text: "" } },
      { placeholder: { options: { name: "body", type: "body", x: 0.5, y: 1.5, w: 9, h: 3.5 }, text: "" } },
    ],
  });
  for (const content of SLIDES) {
    const slide = deck.addSlide({ masterName: "TITLE_AND_BODY" });
    slide.addText(content.title, { placeholder: "title" });
    slide.addText(content.body, { placeholder: "body" });
    slide.addNotes(content.notes);
  }
  return new Uint8Array((await deck.write({ outputType: "nodebuffer" })) as Buffer);
}

function xlsxBytes(): Uint8Array {
  const book = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([
    ["Region", "Quarter", "Amount"],
    ["Northern Territory", "Q3", 48200],
    ["Tasmania", "Q4", 12950],
  ]), "Revenue");
  XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([
    [],
    ["Category", "Vendor", "Cost"],
    ["Office chairs", "Ergonomica", 3150],
  ]), "Expenses");
  return new Uint8Array(XLSX.write(book, { type: "buffer", bookType: "xlsx" }) as Buffer);
}

function drawTextCanvas(lines: readonly string[], width: number, height: number) {
  const canvas = createCanvas(width, height);
  const context = canvas.getContext("2d");
  context.fillStyle = "#ffffff";
  context.fillRect(0, 0, width, height);
  context.fillStyle = "#111111";
  context.font = "44px 'Fixture Sans'";
  lines.forEach((line, index) => context.fillText(line, 60, 100 + index * 70));
  return canvas;
}

/** The lines written up a width × height image: a landscape page turned 90° anticlockwise. */
function sidewaysTextPng(lines: string[], width: number, height: number): Promise<Buffer> {
  const canvas = createCanvas(width, height);
  const context = canvas.getContext("2d");
  context.translate(0, height);
  context.rotate(-Math.PI / 2);
  context.drawImage(drawTextCanvas(lines, height, width), 0, 0);
  return canvas.encode("png");
}

function textImage(lines: string[], format: "png" | "jpeg" | "webp", width = 1000, height = 260): Promise<Buffer> {
  const canvas = drawTextCanvas(lines, width, height);
  return format === "png" ? canvas.encode("png") : canvas.encode(format, 92);
}

function textPixels(lines: readonly string[]) {
  return drawTextCanvas(lines, 1000, 260).getContext("2d").getImageData(0, 0, 1000, 260);
}

/**
 * A TIFF of grey pages, one frame per image (utif2 only encodes single frames), each stored as 8-bit grey
 * (uncompressed), as one JPEG (compression 7, as scanners write greyscale pages) or as CMYK inks
 * (uncompressed, as print workflows write them), the text in cyan and magenta: blue, lost if the inks were misread.
 */
function pageTiff(frames: { width: number; height: number; data: Uint8ClampedArray }[], storage: "grey" | "jpeg" | "cmyk" = "grey"): Uint8Array {
  const HEADER_SPACE = 1000;
  const samples = storage === "cmyk" ? 4 : 1;
  const stored = frames.map((frame) => {
    const pixels = new Uint8Array(frame.width * frame.height * samples);
    for (let i = 0; i < frame.width * frame.height; i++) {
      if (storage === "cmyk") pixels[i * 4] = pixels[i * 4 + 1] = 255 - frame.data[i * 4]!;
      else pixels[i] = frame.data[i * 4]!;
    }
    return storage === "jpeg" ? greyJpeg(pixels, frame.width, frame.height) : pixels;
  });
  let offset = HEADER_SPACE;
  const ifds = frames.map((frame, index) => {
    const ifd = {
      t256: [frame.width], t257: [frame.height], t258: new Array(samples).fill(8), t259: [storage === "jpeg" ? 7 : 1],
      t262: [storage === "cmyk" ? 5 : 1], t273: [offset], t277: [samples],
      t278: [frame.height], t279: [stored[index]!.length], t282: [[72, 1]], t283: [[72, 1]], t296: [2],
    };
    offset += stored[index]!.length;
    return ifd;
  });
  const header = new Uint8Array(UTIF.encode(ifds as unknown as UTIF.IFD[]));
  const bytes = new Uint8Array(offset);
  bytes.set(header);
  let at = HEADER_SPACE;
  for (const pixels of stored) {
    bytes.set(pixels, at);
    at += pixels.length;
  }
  return bytes;
}

function latin1(text: string): Uint8Array {
  return Uint8Array.from(text, (char) => char.charCodeAt(0));
}

if (import.meta.main) {
  const started = performance.now();
  const manifest = await ensureFixtures(generateFixtures);
  console.log(`${manifest.documents.length + manifest.rejected.length} fixtures in ${manifest.dir} (${Math.round(performance.now() - started)} ms)`);
}
