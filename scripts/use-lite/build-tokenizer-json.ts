// A Hugging Face tokenizer.json (Unigram) that reproduces the USE-Lite tokenizer of
// @energetic-ai/embeddings: NFKC, every " " → "▁", one "▁" prepended (always, even before a
// leading space; empty text stays empty), Viterbi over the SentencePiece pieces, runs of
// unknown characters fused into one <unk> (id 0). No BOS/EOS, no truncation.

/** vocab.json entries are [piece, score]; a few scores are null, which the reference treats as 0. */
export type UseLiteVocab = [string, number | null][];

// Ids 0–5 are reserved symbols ("�" = unk, <s>, </s>, extra_token_id_1..3) that the reference
// never matches against text. A score no text piece can lose to keeps them out of the lattice.
const RESERVED_SYMBOLS = 6;
const NEVER_CHOSEN_SCORE = -1e4;

export function buildTokenizerJson(vocab: UseLiteVocab): object {
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: [],
    normalizer: {
      type: "Sequence",
      normalizers: [
        { type: "NFKC" },
        { type: "Replace", pattern: { String: " " }, content: "▁" },
        { type: "Prepend", prepend: "▁" },
      ],
    },
    // The reference's Viterbi treats a best score of exactly 0 as "no path yet", so at the start
    // of a text it never picks the zero-score pieces "▁:", "▁:)", "▁:(", "▁:-)": it emits "▁"
    // alone before a leading ":". Isolating that "▁" reproduces this.
    pre_tokenizer: { type: "Split", pattern: { Regex: "\\A▁(?=:)" }, behavior: "Isolated", invert: false },
    post_processor: null,
    decoder: { type: "Metaspace", replacement: "▁", prepend_scheme: "always", split: false },
    model: {
      type: "Unigram",
      unk_id: 0,
      byte_fallback: false,
      vocab: vocab.map(([piece, score], id) => [piece, id < RESERVED_SYMBOLS ? NEVER_CHOSEN_SCORE : (score ?? 0)]),
    },
  };
}
