// The Unigram word cache (src/models/unigram-words.ts) must tokenize exactly as the library does alone: the
// default model's tokenizer on real text (evaluation corpora and queries), awkward strings and random ones.
import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { cacheUnigramWords, wordsTokenizeAlone } from "../../src/models/unigram-words.ts";
import { defaultModelDir, prepareDefaultModel } from "../../scripts/prepare-default-model.ts";
import { loadCollection } from "../../scripts/bench/eval-collections.ts";

let json: object;
let config: object;
const load = () => new Tokenizer(json, config);
const ids = (tokenizer: Tokenizer, text: string) => tokenizer.encode(text, { add_special_tokens: false }).ids;

beforeAll(async () => {
  await prepareDefaultModel();
  json = JSON.parse(readFileSync(join(defaultModelDir, "tokenizer.json"), "utf8"));
  config = JSON.parse(readFileSync(join(defaultModelDir, "tokenizer_config.json"), "utf8"));
});

/** Texts of every kind the cache could get wrong: spacing, marks already in the text, scripts, blobs. */
const AWKWARD = [
  "",
  " ",
  "  two  spaces\tand\ttabs\nnew\nlines  ",
  "\u2581already\u2581marked \u2581\u2581",
  "emoji 😀👍🏽 and CJK 日本語のテキスト。中文",
  "İstanbul ß ﬁ ① ＡＢＣ x\u0301\u0302",
  "https://example.com/a?b=c&d=e#f",
  "NUMBERS 123,456.78 1e10 ...!!!???",
  "a".repeat(2000),
  "w".repeat(70) + " " + "w".repeat(70),
];

function randomTexts(count: number): string[] {
  const alphabet = [..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789     \n\t.,;:!?'\"()-–—\u2581éüßçñ日本語😀\u0301ﬁ①Ａ"];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: count }, () => Array.from({ length: 1 + Math.floor(next() * 60) }, () => alphabet[Math.floor(next() * alphabet.length)]).join(""));
}

describe("Unigram word cache", () => {
  test("the default model's tokenizer qualifies and gives the library's ids on real, awkward and random text", () => {
    const plain = load();
    const cached = load();
    expect(wordsTokenizeAlone(cached)).toBe(true);
    expect(cacheUnigramWords(cached)).toBe(true);
    const texts = [...AWKWARD, ...randomTexts(5_000)];
    for (const name of ["adi", "med"]) {
      const { corpus, queries } = loadCollection(name);
      texts.push(...corpus.map((d) => d.text), ...queries.map((q) => q.text));
    }
    expect(texts.length).toBeGreaterThan(6_000);
    // Twice: the second pass is answered from the cache.
    for (let pass = 0; pass < 2; pass++) {
      const differing = texts.filter((text) => !Bun.deepEquals(ids(cached, text), ids(plain, text)));
      expect(differing).toEqual([]);
    }
  }, 20_000);

  test("a vocabulary with a piece that spans a word mark, or a model that is not Unigram, is left alone", () => {
    const spanning = new Tokenizer(
      {
        ...json,
        model: { type: "Unigram", unk_id: 0, vocab: [["<unk>", 0], ["\u2581", -1], ["a", -2], ["\u2581a\u2581a", -0.5]] },
      },
      config,
    );
    expect(wordsTokenizeAlone(spanning)).toBe(false);
    expect(cacheUnigramWords(spanning)).toBe(false);
    // That piece wins across the mark, which tokenizing word by word would miss.
    expect(spanning.encode("a a", { add_special_tokens: false }).tokens).toEqual(["\u2581a\u2581a"]);

    const wordPiece = new Tokenizer(
      {
        ...json,
        normalizer: null,
        pre_tokenizer: { type: "Whitespace" },
        decoder: null,
        model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100, vocab: { "[UNK]": 0, a: 1 } },
      },
      config,
    );
    expect(wordsTokenizeAlone(wordPiece)).toBe(false);
  });
});
