// `npm test`: build the module, run every test (the logic's, the connection's, the
// Foundry harness's for each version) with V8 coverage on, then report the line
// coverage of src/foundry/ under the harness and fail below the minimum.
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { bundleCoverage, coverageTable } from "./coverage.mjs";

export const MINIMUM = 90;
const here = resolve(fileURLToPath(import.meta.url), "..", "..");
const dir = join(here, "build", "v8-coverage");
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });

const build = spawnSync(process.execPath, [join(here, "scripts", "build.mjs")], { stdio: "inherit" });
if (build.status !== 0) process.exit(build.status ?? 1);

const files = [
  ...readdirSync(join(here, "test")).filter((f) => f.endsWith(".test.mjs")).map((f) => join("test", f)),
  ...readdirSync(join(here, "test", "harness")).filter((f) => f.endsWith(".test.mjs")).map((f) => join("test", "harness", f)),
].sort();
const run = spawnSync(process.execPath, ["--test", ...process.argv.slice(2), ...files], {
  cwd: here,
  stdio: "inherit",
  env: { ...process.env, NODE_V8_COVERAGE: dir, VTT_BRIDGE_HARNESS_NO_BUILD: "1" },
});

const result = bundleCoverage({ dir, bundle: join(here, "dist", "vtt-bridge.js"), under: join(here, "src", "foundry") });
writeFileSync(join(here, "build", "coverage.json"), JSON.stringify(result, null, 1));
console.log(coverageTable(result, MINIMUM));
if (run.status !== 0) process.exit(run.status ?? 1);
if (!(result.percent >= MINIMUM)) {
  console.error(`src/foundry line coverage ${result.percent.toFixed(1)}% is below ${MINIMUM}%`);
  process.exit(1);
}
