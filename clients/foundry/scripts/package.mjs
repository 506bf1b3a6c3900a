// `npm run package`: dist/vtt-bridge.zip with module.json at its root and every file
// the manifest names (build first). A small store-and-deflate zip writer: no dependency.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { crc32, deflateRawSync } from "node:zlib";

import { HERE, manifest, namedFiles, releasedManifest } from "./manifest.mjs";

function dosTime(date) {
  const time = (date.getHours() << 11) | (date.getMinutes() << 5) | (date.getSeconds() >> 1);
  const day = ((date.getFullYear() - 1980) << 9) | ((date.getMonth() + 1) << 5) | date.getDate();
  return { time, day };
}

/** @param {{name: string, data: Buffer}[]} files */
export function zip(files, when = new Date(2026, 0, 1)) {
  const { time, day } = dosTime(when);
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const { name, data } of files) {
    const packed = deflateRawSync(data, { level: 9 });
    const nameBuf = Buffer.from(name, "utf8");
    const crc = crc32(data) >>> 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt16LE(time, 10);
    local.writeUInt16LE(day, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBuf.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, nameBuf, packed);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt16LE(time, 12);
    central.writeUInt16LE(day, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBuf.length, 28);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, nameBuf);
    offset += local.length + nameBuf.length + packed.length;
  }
  const dir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}

/** The files that go in the package: the manifest, what it names, the README, the source map. */
export function packageFiles() {
  const names = ["module.json", ...namedFiles(), "README.md"];
  for (const extra of ["dist/vtt-bridge.js.map", "dist/vtt-bridge.js.LEGAL.txt"]) if (existsSync(join(HERE, extra))) names.push(extra);
  const missing = names.filter((n) => !existsSync(join(HERE, n)));
  if (missing.length) throw new Error(`missing (run npm run build?): ${missing.join(", ")}`);
  return [...new Set(names)].map((name) => ({ name, data: readFileSync(join(HERE, name)) }));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // module.json gets its version and release URLs written (from package.json), then is
  // packed, and copied beside the zip: a release uploads both (the manifest URL points there).
  const m = releasedManifest();
  writeFileSync(join(HERE, "module.json"), `${JSON.stringify(m, null, 2)}\n`);
  mkdirSync(join(HERE, "dist"), { recursive: true });
  const out = join(HERE, "dist", `${m.id}.zip`);
  writeFileSync(out, zip(packageFiles()));
  writeFileSync(join(HERE, "dist", "module.json"), `${JSON.stringify(m, null, 2)}\n`);
  console.log(`${out} (${m.id} ${m.version})`);
}
