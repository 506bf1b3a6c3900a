// What the manifest names, for the package script and the manifest test.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const HERE = join(dirname(fileURLToPath(import.meta.url)), "..");

export function manifest() {
  return JSON.parse(readFileSync(join(HERE, "module.json"), "utf8"));
}

/** Every file module.json names, relative to the module's root. */
export function namedFiles(m = manifest()) {
  return [
    ...(m.esmodules || []),
    ...(m.scripts || []),
    ...(m.styles || []),
    ...(m.languages || []).map((l) => l.path),
    ...(m.license ? [m.license] : []),
    ...(m.readme ? [m.readme] : []),
  ];
}
