// The catalogue of case categories and the seeded schedule that turns (seed, count) into cases.
import type { FuzzCase } from "../case.ts";
import { Rng } from "../rng.ts";
import type { Category, GenContext } from "./context.ts";
import { JSON_BODY_CATEGORIES } from "./json-bodies.ts";
import { REQUEST_CATEGORIES } from "./requests.ts";
import { UPLOAD_CATEGORIES } from "./uploads.ts";

export const CATEGORIES: Category[] = [...JSON_BODY_CATEGORIES, ...REQUEST_CATEGORIES, ...UPLOAD_CATEGORIES];

/**
 * `count` cases for `seed`: every category once (when count allows), then categories drawn by weight.
 * The same seed, count and bomb size give the same cases.
 */
export async function generateCases(seed: number, count: number, bombMegabytes: number): Promise<FuzzCase[]> {
  const rng = new Rng(seed);
  const cache = new Map<string, Promise<unknown>>();
  const context: GenContext = {
    rng,
    unique: "",
    occurrence: 0,
    bombMegabytes,
    memo: <T>(key: string, make: () => Promise<T>) => {
      if (!cache.has(key)) cache.set(key, make());
      return cache.get(key) as Promise<T>;
    },
  };
  const totalWeight = CATEGORIES.reduce((sum, c) => sum + c.weight, 0);
  const cases: FuzzCase[] = [];
  const seen = new Map<string, number>();
  for (let id = 0; id < count; id++) {
    let category = CATEGORIES[id];
    if (id >= CATEGORIES.length) {
      let draw = rng.next() * totalWeight;
      category = CATEGORIES.find((c) => (draw -= c.weight) < 0) ?? CATEGORIES[CATEGORIES.length - 1];
    }
    context.unique = `${seed}-${id}-${rng.int(0, 1e9)}`;
    context.occurrence = seen.get(category.name) ?? 0;
    seen.set(category.name, context.occurrence + 1);
    const spec = await category.generate(context);
    cases.push({ ...spec, id, category: category.name });
  }
  return cases;
}
