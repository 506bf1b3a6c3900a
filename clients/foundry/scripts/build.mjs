// Bundle the module (socket.io-client from npm and the bridge's shared modules included)
// into dist/vtt-bridge.js: one ES module, no CDN.
import { build } from "esbuild";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = join(dirname(fileURLToPath(import.meta.url)), "..");
await build({
  entryPoints: [join(here, "src/foundry/main.js")],
  outfile: join(here, "dist/vtt-bridge.js"),
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  sourcemap: true,
  legalComments: "linked",
  logLevel: "warning",
});
