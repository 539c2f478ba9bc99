// Tokenization for ONNX models from a folder's tokenizer.json. @huggingface/tokenizers ignores the file's
// truncation and padding settings, so texts are tokenized without special tokens, truncated by the caller,
// and then wrapped with the special tokens of the tokenizer's post-processor template.
import { Tokenizer } from "@huggingface/tokenizers";
import { folderError, readOptionalJson, readRequiredJson } from "./model-folder.ts";
import { cacheUnigramWords } from "./unigram-words.ts";

/** One model input row before padding. */
export interface TokenSequence {
  ids: number[];
  typeIds: number[];
}

/** A post-processor template: special token ids and the places where sequence A or B goes. */
type TemplatePiece = { special: number; typeId: number } | { sequence: "A" | "B"; typeId: number };

// Stand-ins run through the post-processor to learn its template; no vocabulary contains them.
const MARKER_A = "\u0000quarry:A";
const MARKER_B = "\u0000quarry:B";

export class ModelTokenizer {
  private constructor(
    private readonly tokenizer: Tokenizer,
    readonly padId: number,
    private readonly singleTemplate: TemplatePiece[],
    private readonly pairTemplate: TemplatePiece[],
  ) {}

  static fromFolder(dir: string): ModelTokenizer {
    const json = readRequiredJson<{ padding?: { pad_id?: number } | null }>(dir, "tokenizer.json");
    const config = readOptionalJson<{ pad_token?: string | { content: string } }>(dir, "tokenizer_config.json") ?? {};
    let tokenizer: Tokenizer;
    try {
      tokenizer = new Tokenizer(json, config);
    } catch (error) {
      throw folderError(dir, `has a tokenizer.json that cannot be loaded: ${(error as Error).message}`);
    }
    const configPad = typeof config.pad_token === "object" ? config.pad_token?.content : config.pad_token;
    const padId =
      json.padding?.pad_id ??
      [configPad, "[PAD]", "<pad>"].map((t) => (t ? tokenizer.token_to_id(t) : undefined)).find((id) => id !== undefined) ??
      0;
    cacheUnigramWords(tokenizer);
    const template = (pair: boolean) => readTemplate(tokenizer, pair, dir);
    return new ModelTokenizer(tokenizer, padId, template(false), template(true));
  }

  /** Token ids of `text` without special tokens. */
  tokenIds(text: string): number[] {
    return this.tokenizer.encode(text, { add_special_tokens: false }).ids;
  }

  /** Special tokens added around one text (pair = false) or a text pair. */
  specialTokenCount(pair: boolean): number {
    return (pair ? this.pairTemplate : this.singleTemplate).filter((p) => "special" in p).length;
  }

  /** One text's (already truncated) ids with the special tokens around them. */
  single(ids: number[]): TokenSequence {
    const sequence = applyTemplate(this.singleTemplate, ids, []);
    // Without special tokens an empty text would be an empty row, which no model accepts: feed one pad token.
    return sequence.ids.length > 0 ? sequence : { ids: [this.padId], typeIds: [0] };
  }

  /** A text pair's (already truncated) ids with special tokens and segment (token type) ids. */
  pair(a: number[], b: number[]): TokenSequence {
    return applyTemplate(this.pairTemplate, a, b);
  }
}

function readTemplate(tokenizer: Tokenizer, pair: boolean, dir: string): TemplatePiece[] {
  if (!tokenizer.post_processor) {
    return pair ? [{ sequence: "A", typeId: 0 }, { sequence: "B", typeId: 1 }] : [{ sequence: "A", typeId: 0 }];
  }
  const { tokens, token_type_ids } = tokenizer.post_processor.post_process([MARKER_A], pair ? [MARKER_B] : null, true);
  return tokens.map((token, i) => {
    const typeId = token_type_ids?.[i] ?? 0;
    if (token === MARKER_A) return { sequence: "A", typeId };
    if (token === MARKER_B) return { sequence: "B", typeId };
    const special = tokenizer.token_to_id(token);
    if (special === undefined) throw folderError(dir, `has a tokenizer.json whose post-processor adds "${token}", which is not in its vocabulary`);
    return { special, typeId };
  });
}

function applyTemplate(template: TemplatePiece[], a: number[], b: number[]): TokenSequence {
  const ids: number[] = [];
  const typeIds: number[] = [];
  for (const piece of template) {
    const part = "special" in piece ? [piece.special] : piece.sequence === "A" ? a : b;
    for (const id of part) {
      ids.push(id);
      typeIds.push(piece.typeId);
    }
  }
  return { ids, typeIds };
}

/**
 * Fits a (query, passage) pair into `budget` content tokens. Only the passage is cut, unless the query
 * alone would take more than half the budget: then the query keeps half (or what the passage leaves).
 */
export function truncatePair(query: number[], passage: number[], budget: number): [number[], number[]] {
  if (query.length + passage.length <= budget) return [query, passage];
  const queryKeep = Math.min(query.length, Math.max(budget - passage.length, Math.ceil(budget / 2)));
  return [query.slice(0, queryKeep), passage.slice(0, budget - queryKeep)];
}
