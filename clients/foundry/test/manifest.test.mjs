import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { inflateRawSync } from "node:zlib";

import { HERE, manifest, namedFiles, releaseUrls, releasedManifest } from "../scripts/manifest.mjs";
import { packageFiles, zip } from "../scripts/package.mjs";

test("the manifest has the fields Foundry 12-14 reads", () => {
  const m = manifest();
  assert.equal(m.id, "vtt-bridge");
  assert.equal(typeof m.title, "string");
  assert.match(m.version, /^\d+\.\d+\.\d+$/);
  assert.deepEqual(m.compatibility, { minimum: "12", verified: "14" });
  assert.deepEqual(m.esmodules, ["dist/vtt-bridge.js"]);
  assert.deepEqual(m.languages, [{ lang: "en", name: "English", path: "lang/en.json" }]);
  const pkg = JSON.parse(readFileSync(join(HERE, "package.json"), "utf8"));
  assert.equal(m.version, pkg.version);
});

test("every file the manifest names exists after the build, and the English file has every key the code uses", () => {
  execFileSync(process.execPath, [join(HERE, "scripts/build.mjs")]);
  for (const file of namedFiles()) assert.ok(existsSync(join(HERE, file)), file);
  const en = JSON.parse(readFileSync(join(HERE, "lang/en.json"), "utf8"));
  const code = readdirSync(join(HERE, "src/foundry")).filter((f) => f.endsWith(".js")).map((f) => readFileSync(join(HERE, "src/foundry", f), "utf8")).join("\n");
  const used = new Set([...code.matchAll(/\bt\(`?"?([A-Z][A-Za-z.]+)/g)].map((m) => m[1]));
  assert.ok(used.has("Attack.Weapon") && used.has("Charms.NotAutomated"), "the feature modules' keys are read too");
  for (const key of used) if (!key.endsWith(".")) assert.ok(`VTTBRIDGE.${key}` in en, `lang/en.json lacks VTTBRIDGE.${key}`);
  for (const s of ["url", "table", "key"]) assert.ok(`VTTBRIDGE.Settings.${s}.Name` in en);
});

test("the bundle carries socket.io-client itself: no CDN, no bare imports left", () => {
  const bundle = readFileSync(join(HERE, "dist/vtt-bridge.js"), "utf8");
  assert.doesNotMatch(bundle, /cdn\.|unpkg|jsdelivr/);
  assert.doesNotMatch(bundle, /^\s*import\s.+from\s+["'](?!\.)/m);
  assert.match(bundle, /engine\.io|socket\.io/i);
});

/** Read a zip's entries back (local headers), inflating each. */
function unzip(buf) {
  const out = new Map();
  let at = 0;
  while (buf.readUInt32LE(at) === 0x04034b50) {
    const method = buf.readUInt16LE(at + 8);
    const size = buf.readUInt32LE(at + 18);
    const nameLen = buf.readUInt16LE(at + 26);
    const extra = buf.readUInt16LE(at + 28);
    const name = buf.subarray(at + 30, at + 30 + nameLen).toString("utf8");
    const data = buf.subarray(at + 30 + nameLen + extra, at + 30 + nameLen + extra + size);
    out.set(name, method === 8 ? inflateRawSync(data) : data);
    at += 30 + nameLen + extra + size;
  }
  return out;
}

test("the package is a zip with module.json at its root and every named file", () => {
  execFileSync(process.execPath, [join(HERE, "scripts/build.mjs")]);
  const entries = unzip(zip(packageFiles()));
  assert.ok(entries.has("module.json"));
  assert.deepEqual(JSON.parse(entries.get("module.json").toString()), manifest());
  for (const file of namedFiles()) assert.ok(entries.has(file), file);
  assert.ok(entries.get("dist/vtt-bridge.js").length > 10000);
});

test("defect 9: module.json is installable by URL: manifest, download and url come from package.json's one release URL", () => {
  const m = manifest();
  const pkg = JSON.parse(readFileSync(join(HERE, "package.json"), "utf8"));
  const urls = releaseUrls(pkg.version, pkg.config.releaseUrl);
  assert.equal(m.manifest, urls.manifest);
  assert.equal(m.download, urls.download);
  assert.equal(m.url, urls.url);
  assert.match(m.manifest, /^https:\/\/.+\/module\.json$/);
  assert.match(m.download, new RegExp(`/v${pkg.version}/vtt-bridge\\.zip$`));
  // The committed module.json is what `npm run package` writes: nothing to hand-edit.
  assert.deepEqual(releasedManifest(pkg.config.releaseUrl), m);
  // Another release home changes all three, in one place.
  const other = releasedManifest("https://example.test/owner/fork/releases/");
  assert.equal(other.manifest, "https://example.test/owner/fork/releases/latest/download/module.json");
  assert.equal(other.download, `https://example.test/owner/fork/releases/download/v${pkg.version}/vtt-bridge.zip`);
  assert.equal(other.url, "https://example.test/owner/fork");
});

test("`npm run package` writes module.json with the release URLs into the zip and beside it", () => {
  execFileSync("npm", ["run", "package", "--silent"], { cwd: HERE, env: { ...process.env, VTT_BRIDGE_RELEASE_URL: "" } });
  const packed = JSON.parse(unzip(readFileSync(join(HERE, "dist", "vtt-bridge.zip"))).get("module.json").toString());
  const beside = JSON.parse(readFileSync(join(HERE, "dist", "module.json"), "utf8"));
  for (const m of [packed, beside]) {
    assert.equal(m.manifest, manifest().manifest);
    assert.equal(m.download, manifest().download);
  }
});
