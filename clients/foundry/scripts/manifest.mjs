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

/**
 * Where a release of the module lives, from ONE place: package.json's
 * `config.releaseUrl` (a GitHub-style releases URL), or `$VTT_BRIDGE_RELEASE_URL`.
 * Foundry installs from `manifest` and updates when the manifest there names a newer
 * version; `download` is the zip of exactly this version.
 * @param {string} version @param {string} [base]
 */
export function releaseUrls(version, base = releaseBase()) {
  const root = base.replace(/\/+$/, "");
  return {
    url: root.replace(/\/releases$/, ""),
    manifest: `${root}/latest/download/module.json`,
    download: `${root}/download/v${version}/vtt-bridge.zip`,
  };
}

export function releaseBase() {
  const pkg = JSON.parse(readFileSync(join(HERE, "package.json"), "utf8"));
  return process.env.VTT_BRIDGE_RELEASE_URL || pkg.config.releaseUrl;
}

/** module.json as a release publishes it: the version of package.json, the release URLs. */
export function releasedManifest(base = releaseBase(), m = manifest()) {
  const pkg = JSON.parse(readFileSync(join(HERE, "package.json"), "utf8"));
  const { url, manifest: man, download } = releaseUrls(pkg.version, base);
  const { id, title, description, ...rest } = m;
  delete rest.url;
  delete rest.manifest;
  delete rest.download;
  delete rest.version;
  return { id, title, description, version: pkg.version, url, manifest: man, download, ...rest };
}
