// Identifies one conversion: the source package version plus the converter's own source, so a
// changed converter regenerates models/use-lite without anyone bumping a version by hand.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { sourcePackage } from "./source-package.ts";

const scriptsDir = join(import.meta.dir, "..");

export function converterStamp(): string {
  const hash = createHash("sha256").update(`${sourcePackage.name}@${sourcePackage.version}\n`);
  const converterFiles = [
    join(scriptsDir, "convert-use-lite.ts"),
    ...readdirSync(import.meta.dir).filter((f) => f.endsWith(".ts")).sort().map((f) => join(import.meta.dir, f)),
  ];
  for (const file of converterFiles) hash.update(readFileSync(file));
  return hash.digest("hex");
}
