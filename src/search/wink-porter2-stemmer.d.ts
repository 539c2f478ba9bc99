declare module "wink-porter2-stemmer" {
  /** Stems one lower-case English word with the Porter2 (Snowball English) algorithm. */
  export default function stem(word: string): string;
}
