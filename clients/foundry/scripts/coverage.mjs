// Line coverage of the module's Foundry code (src/foundry/) as the harness runs it.
//
// The tests run with NODE_V8_COVERAGE set, so every Node process writes V8's precise
// block coverage; the harness runs the BUILT bundle, so its ranges are mapped back to
// the sources through the bundle's source map. (Node 20's own `--experimental-test-coverage`
// reports nothing for this bundle — "Could not report code coverage. TypeError: Cannot
// read properties of undefined (reading 'startOffset')" — hence this reading of the same
// V8 data.) A source line counts when the source map maps code to it; it is covered
// when any of that code ran (the innermost V8 range around it has a count above 0).
import { readFileSync, readdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const B64 = Object.fromEntries([..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"].map((c, i) => [c, i]));

/** Decode a source map's `mappings`: [genLine, genCol, source, origLine, origCol] per segment. */
export function decodeMappings(mappings) {
  const out = [];
  let source = 0;
  let origLine = 0;
  let origCol = 0;
  mappings.split(";").forEach((line, genLine) => {
    let genCol = 0;
    for (const seg of line.split(",")) {
      if (!seg) continue;
      const values = [];
      let value = 0;
      let shift = 0;
      for (const c of seg) {
        const digit = B64[c];
        value += (digit & 31) << shift;
        if (digit & 32) shift += 5;
        else {
          values.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      genCol += values[0];
      if (values.length >= 4) {
        source += values[1];
        origLine += values[2];
        origCol += values[3];
        out.push([genLine, genCol, source, origLine, origCol]);
      }
    }
  });
  return out;
}

/** The count of the innermost range around `offset` (V8 block coverage of one script). */
function countAt(ranges, offset) {
  let best = null;
  for (const r of ranges) {
    if (r.startOffset <= offset && offset < r.endOffset && (!best || r.endOffset - r.startOffset <= best.endOffset - best.startOffset)) best = r;
  }
  return best ? best.count : null;
}

/**
 * Line coverage of the sources under `under` (absolute path) from the V8 coverage files
 * in `dir`, for the bundle `bundle` (absolute path) and its `.map`.
 * @returns {{files: {file: string, lines: number, covered: number, uncovered: number[]}[], lines: number, covered: number, percent: number}}
 */
export function bundleCoverage({ dir, bundle, under }) {
  const url = pathToFileURL(bundle).href;
  const map = JSON.parse(readFileSync(`${bundle}.map`, "utf8"));
  const code = readFileSync(bundle, "utf8");
  const lineStarts = [0];
  for (let i = 0; i < code.length; i++) if (code[i] === "\n") lineStarts.push(i + 1);
  const sources = map.sources.map((s) => resolve(join(bundle, ".."), map.sourceRoot ?? "", s));
  const wanted = sources.map((s) => s.startsWith(under + "/"));
  const segments = decodeMappings(map.mappings).filter((s) => wanted[s[2]]);
  const runs = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith(".json"))) {
    const data = JSON.parse(readFileSync(join(dir, f), "utf8"));
    for (const script of data.result ?? []) if (script.url === url) runs.push(script.functions.flatMap((fn) => fn.ranges));
  }
  /** @type {Map<string, Map<number, boolean>>} */
  const lines = new Map();
  for (const [genLine, genCol, src, origLine] of segments) {
    const offset = lineStarts[genLine] + genCol;
    const ran = runs.some((ranges) => (countAt(ranges, offset) ?? 0) > 0);
    const file = sources[src];
    if (!lines.has(file)) lines.set(file, new Map());
    const m = lines.get(file);
    m.set(origLine + 1, (m.get(origLine + 1) ?? false) || ran);
  }
  const files = [...lines.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([file, m]) => ({
    file: relative(join(under, ".."), file),
    lines: m.size,
    covered: [...m.values()].filter(Boolean).length,
    uncovered: [...m.entries()].filter(([, v]) => !v).map(([l]) => l).sort((a, b) => a - b),
  }));
  const total = files.reduce((n, f) => n + f.lines, 0);
  const covered = files.reduce((n, f) => n + f.covered, 0);
  return { files, lines: total, covered, percent: total ? (100 * covered) / total : 0, runs: runs.length };
}

/** Lines as ranges: [3, 4, 5, 9] → "3-5, 9". */
export function ranges(lines) {
  const out = [];
  for (const l of lines) {
    const last = out.at(-1);
    if (last && last[1] === l - 1) last[1] = l;
    else out.push([l, l]);
  }
  return out.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(", ");
}

/** The report as text. */
export function coverageTable(result, minimum) {
  const rows = result.files.map((f) => `  ${f.file.padEnd(26)} ${(100 * f.covered / f.lines).toFixed(1).padStart(6)}%  ${String(f.lines).padStart(5)} lines  ${f.uncovered.length ? `uncovered: ${ranges(f.uncovered)}` : ""}`);
  return [
    `Line coverage of src/foundry/ under the harness (${result.runs} process(es) ran the bundle):`,
    ...rows,
    `src/foundry line coverage: ${result.percent.toFixed(1)}% of ${result.lines} lines (minimum ${minimum}%)`,
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const here = resolve(fileURLToPath(import.meta.url), "..", "..");
  const result = bundleCoverage({ dir: process.argv[2] ?? join(here, "build", "v8-coverage"), bundle: join(here, "dist", "vtt-bridge.js"), under: join(here, "src", "foundry") });
  console.log(coverageTable(result, 90));
}
