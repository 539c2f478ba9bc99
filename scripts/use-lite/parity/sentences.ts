// Texts for comparing the ONNX conversion with the TF.js reference: short and long, prose,
// punctuation, numbers, markup, non-Latin scripts, characters outside the vocabulary, and
// whitespace/NFKC edge cases.

const SHORT = [
  "Hello.",
  "OK",
  "Why?",
  "Thanks a lot!",
  "Data retrieval",
  "a",
  "Self-hosted search",
  "The end.",
];

const PROSE = [
  "The quick brown fox jumps over the lazy dog.",
  "Retrieval-augmented generation combines a search index with a language model.",
  "Our knowledge base contains policies, manuals and meeting notes from the last five years.",
  "Please reset your password before the end of the week.",
  "The committee postponed its decision until more evidence becomes available.",
  "Photosynthesis converts light energy into chemical energy stored in glucose.",
  "She walked along the river, thinking about the letter she had never sent.",
  "Backups run every night at two o'clock and are kept for thirty days.",
  "The patient reported mild headaches and occasional dizziness after the treatment.",
  "Airfoil lift depends on the angle of attack, air density and velocity squared.",
  "In 1969, Apollo 11 landed on the Moon and two astronauts walked on its surface.",
  "Customers can return unused items within fourteen days of delivery.",
  "The server logs show a spike in latency shortly after the deployment.",
  "Vector search finds passages that are semantically similar to a query.",
  "Keyword search remains strong when queries contain rare technical terms.",
  "The recipe calls for two eggs, a cup of flour and a pinch of salt.",
  "He argued that the proposal was too expensive and too risky to approve.",
  "Turbulent boundary layers transfer heat more effectively than laminar ones.",
  "Employees must complete the security training before accessing production systems.",
  "The museum's new exhibition explores the history of maritime trade.",
  "Children learn languages faster when they are immersed in them early.",
  "A contract is void if either party was coerced into signing it.",
  "The algorithm sorts the list in place and runs in O(n log n) time.",
  "Heavy rain is expected tomorrow, so the outdoor concert has been cancelled.",
  "Invoices older than ninety days are escalated to the collections team.",
];

const PUNCTUATION_AND_MARKUP = [
  "Wait... what?!",
  "(a) first; (b) second — and (c) third.",
  "“Smart quotes” and ‘single ones’ aren't the same as \"straight\" quotes.",
  "Email jane.doe@example.com or visit https://example.org/docs?page=2#setup.",
  "Run `npm install` then `bun test --timeout 120000` in the project root.",
  "## Installation\n\n1. Download the binary.\n2. Run it with --help.",
  "const total = items.reduce((sum, item) => sum + item.price, 0);",
  "<div class=\"note\">Remember to save your work!</div>",
  "Pros/cons: fast & cheap | slow & expensive.",
  "[1] Smith, J. (2020). Deep Retrieval. J. Inf. Sci., 46(3), 1-20.",
  ":) great job, see you tomorrow",
  ": colon at the very start",
  "C:\\Users\\admin\\Documents\\report_final_v2.docx",
  "#hashtag @mention $variable %percent ^caret *star _underscore ~tilde",
];

const NUMBERS = [
  "The invoice total was $1,234.56 on 2023-11-05.",
  "Call +1 (555) 010-9999 between 9:00 and 17:30.",
  "3.14159 × 2 = 6.28318",
  "Version 2.4.1 fixed 17 bugs and introduced 3 regressions.",
  "50% of 200 is 100, and 0.5% of 200 is 1.",
  "The meeting is at 10:30, the call at 14:00.",
  "Order #A-4471-ZQ shipped 12/03/2024 with 3 of 4 items.",
  "Temperatures ranged from -12°C to 38.5°C in 2022.",
  "1 2 3 4 5 6 7 8 9 10",
  "ISBN 978-3-16-148410-0",
];

const NON_ASCII = [
  "Café crème brûlée à la française.",
  "naïve façade coöperate résumé",
  "Zürich liegt in der Schweiz und hat viele Brücken.",
  "El niño comió paella en Málaga con su abuela.",
  "Москва — столица России.",
  "東京は日本の首都です。",
  "Ελληνικά γράμματα: α, β, γ, δ.",
  "مرحبا بالعالم",
  "हिन्दी भाषा भारत में बोली जाती है।",
  "Emoji test 😀🚀 with a rocket and a smile.",
  "ﬁnancial ligatures ﬂow through NFKC",
  "Full-width ＡＢＣ１２３ letters and digits",
  "non-breaking\u00a0space and\u2009thin space",
  "tab\tseparated\tvalues",
  "line one\nline two\r\nline three",
  "  leading and trailing spaces  ",
  "double  spaces   between    words",
  "Ünïcödé ÄÖÜ äöü ß ÿ Œuvre",
  "Replacement character \uFFFD and <s> tags </s> in text",
  "Mixed 中文 and English in one sentence.",
  "ångström, øresund, ðe, þorn",
  "Price: 5€, 3£, 100¥, 20₹.",
];

// Two segmentations of these score exactly the same (runs of one character, hex). The TF.js
// tokenizer keeps the later candidate, the Hugging Face Unigram model the earlier one, so
// the same pieces come out in a different order.
const TIED_SEGMENTATIONS = [
  "Hmmmmmm... sooooo gooood!!!",
  "Fixed in commit 1921fcb5b416b63ffc4acad051b6aad5722f777d (see changelog).",
];

const MEDIUM = [...PROSE, ...PUNCTUATION_AND_MARKUP, ...NUMBERS, ...NON_ASCII, ...TIED_SEGMENTATIONS];

/** Paragraph number `seed`: 18 prose sentences in a seeded order, about 300 tokens. */
function longParagraph(seed: number): string {
  const order = PROSE.map((_, i) => i);
  let state = seed + 1;
  for (let i = order.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const j = state % (i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order.slice(0, 18).map((i) => PROSE[i]).join(" ");
}

/** The model itself only reads the first 128 tokens of these. */
const LONG = Array.from({ length: 19 }, (_, seed) => longParagraph(seed));

export const PARITY_SENTENCES: string[] = [...SHORT, ...MEDIUM, ...LONG];

/** A smaller spread of the same kinds of text, for the test suite. */
export const PARITY_SENTENCES_SMALL: string[] = [
  SHORT[0], SHORT[5], PROSE[0], PROSE[10], PROSE[22],
  PUNCTUATION_AND_MARKUP[1], PUNCTUATION_AND_MARKUP[3], PUNCTUATION_AND_MARKUP[10],
  NUMBERS[0], NUMBERS[2], NUMBERS[6],
  NON_ASCII[0], NON_ASCII[4], NON_ASCII[5], NON_ASCII[9], NON_ASCII[10], NON_ASCII[12], NON_ASCII[15],
  LONG[0], LONG[7],
];

/** The float32 conversion is exact: every text's vector is within this cosine of the TF.js reference. */
export const FLOAT32_MIN_COSINE = 0.999;
/** The int8 build Quarry runs (weights and activations quantized) stays within this cosine of the reference. */
export const INT8_MIN_COSINE = 0.995;
