// What a category generator gets: the seeded random source, a per-case unique token, the size hostile
// files are scaled to, and a cache so an expensive file (a bomb) is built once per run.
import type { CaseSpec } from "../case.ts";
import type { Rng } from "../rng.ts";

export interface GenContext {
  rng: Rng;
  /** Differs for every case of a run (and between seeds): for emails that must be new. */
  unique: string;
  /** How many cases of the current category came before this one in the run (to cycle through a list). */
  occurrence: number;
  /** Inflated size of zip and stream bombs, in MB. */
  bombMegabytes: number;
  memo<T>(key: string, make: () => Promise<T>): Promise<T>;
}

export interface Category {
  name: string;
  /** Relative share of the cases after every category has had one. */
  weight: number;
  generate(g: GenContext): CaseSpec | Promise<CaseSpec>;
}
