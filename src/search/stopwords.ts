// English stopwords (the Snowball project's list, apostrophes dropped as the tokenizer drops them):
// words too common to tell passages apart. Leaving them out of the keyword index keeps posting lists
// short, and measured on the evaluation collections it does not cost ranking quality (bench:quality).
// Kept out of the list, as words people search for: who (WHO), won, can, am (AM radio), d (vitamin D),
// don and ma; with them searchable, nDCG@10 moved by -0.001 to +0.008 (adi hybrid 0.505 -> 0.513).
export const ENGLISH_STOPWORDS: ReadonlySet<string> = new Set(
  `i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers
  herself it its itself they them their theirs themselves what which whom this that these those is are was
  were be been being have has had having do does did doing would should could ought a an the and but if or
  because as until while of at by for with about against between into through during before after above
  below to from up down in out on off over under again further then once here there when where why how all
  any both each few more most other some such no nor not only own same so than too very s t will just
  shouldn now ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn mightn mustn needn shan wasn
  weren wouldn`.split(/\s+/),
);
