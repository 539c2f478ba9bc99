// A word cache for SentencePiece Unigram tokenizers. @huggingface/tokenizers runs the Unigram Viterbi over
// each whole pre-token, which for a SentencePiece export is the whole text, at ~4.5 µs a token: a third of
// an ingested chunk's CPU time with the default model went to tokenizing, once to size the chunk and once
// to embed it. When no piece of the vocabulary has the word mark "▁" past its first character, no piece
// spans a "▁" inside the text, so every segmentation breaks before each "▁" and the best one is the best
// of each "▁word" in turn, joined: words are tokenized one at a time and remembered.
import { Unigram, type Tokenizer } from "@huggingface/tokenizers";

const WORD_MARK = "\u2581";
/** Words remembered per tokenizer before the cache starts over (~50 bytes each plus their pieces). */
const MAX_WORDS = 50_000;
/** Longer words (blobs, long runs without spaces) are tokenized every time rather than remembered. */
const MAX_WORD_LENGTH = 64;

/** Whether the tokenizer's model is Unigram and no vocabulary piece has the word mark past its first character. */
export function wordsTokenizeAlone(tokenizer: Tokenizer): boolean {
  const model = tokenizer.model;
  return model instanceof Unigram && model.vocab.every((piece) => piece.indexOf(WORD_MARK, 1) === -1);
}

/**
 * Makes the tokenizer's Unigram model tokenize word by word with a cache, when wordsTokenizeAlone says the
 * result is the same; returns whether it did. The model's own unknown-token fusing still runs on the
 * joined result.
 */
export function cacheUnigramWords(tokenizer: Tokenizer): boolean {
  if (!wordsTokenizeAlone(tokenizer)) return false;
  const model = tokenizer.model as Unigram;
  const cache = new Map<string, string[]>();
  model.encode = (tokens: string[]): string[] => {
    const pieces: string[] = [];
    for (const token of tokens) {
      for (let start = 0; start < token.length; ) {
        const mark = token.indexOf(WORD_MARK, start + 1);
        const end = mark === -1 ? token.length : mark;
        const word = token.slice(start, end);
        let wordPieces = cache.get(word);
        if (wordPieces === undefined) {
          wordPieces = model.tokenize(word);
          if (word.length <= MAX_WORD_LENGTH) {
            if (cache.size >= MAX_WORDS) cache.clear();
            cache.set(word, wordPieces);
          }
        }
        for (const piece of wordPieces) pieces.push(piece);
        start = end;
      }
    }
    return pieces;
  };
  return true;
}
