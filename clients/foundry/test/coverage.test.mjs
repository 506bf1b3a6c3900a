// The coverage report of npm test: source-map decoding and V8 ranges mapped to source lines.
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { test } from "node:test";

import { bundleCoverage, decodeMappings, ranges } from "../scripts/coverage.mjs";

test("source map segments decode to [generated line, column, source, original line, column]", () => {
  // "AAAA": 0,0,0,0 ; "AACA": line +1 ; "IAAI": column +4, original column +4.
  assert.deepEqual(decodeMappings("AAAA;AACA,IAAI"), [[0, 0, 0, 0, 0], [1, 0, 0, 1, 0], [1, 4, 0, 1, 4]]);
  assert.equal(ranges([3, 4, 5, 9]), "3-5, 9");
});

test("a source line is covered when code mapped to it ran, uncovered when its range has count 0", () => {
  const dir = mkdtempSync(join(tmpdir(), "vtt-bridge-cov-"));
  try {
    const src = join(dir, "src", "foundry");
    mkdirSync(src, { recursive: true });
    mkdirSync(join(dir, "dist"));
    mkdirSync(join(dir, "cov"));
    const bundle = join(dir, "dist", "b.js");
    writeFileSync(bundle, "run();\nskip();\n");
    // Bundle line 0 → a.js line 0, bundle line 1 → a.js line 2.
    writeFileSync(`${bundle}.map`, JSON.stringify({ version: 3, sources: ["../src/foundry/a.js"], mappings: "AAAA;AAEA" }));
    const url = pathToFileURL(bundle).href;
    writeFileSync(join(dir, "cov", "c.json"), JSON.stringify({ result: [{ url, functions: [{ ranges: [{ startOffset: 0, endOffset: 14, count: 1 }, { startOffset: 7, endOffset: 14, count: 0 }] }] }] }));
    const result = bundleCoverage({ dir: join(dir, "cov"), bundle, under: src });
    assert.deepEqual(result.files, [{ file: "foundry/a.js", lines: 2, covered: 1, uncovered: [3] }]);
    assert.equal(result.percent, 50);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
