// The deterministic size check: fails (exit 1) when a first-load file of the package grows past its ceiling in
// scripts/size-ceiling.json, where each entry holds the file, its figure when the ceiling was last set and the
// ceiling, all as gzip -9 bytes (Node's zlib, level 9: the same bytes give the same figure on any machine).
// Raising a ceiling is a one-line change of that file, made on purpose and reviewed; lowering it after a saving
// keeps the headroom honest. Files that load on demand (the widget's highlighter and Chinese strings) are not
// first-load bytes and have no ceiling here.
// Usage: node scripts/check-size.mjs [--ceilings FILE] [entry ...]   (entries of the file, all when none is named;
// FILE is scripts/size-ceiling.json unless given, relative paths in it are from the repository root)
import { existsSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
let ceilings = path.join(ROOT, 'scripts/size-ceiling.json');
if (args[0] === '--ceilings') { ceilings = path.resolve(args[1]); args.splice(0, 2); }
const { files } = JSON.parse(readFileSync(ceilings, 'utf8'));

/** gzip -9 bytes of a file. */
function gzipSize(file) {
  return gzipSync(readFileSync(file), { level: 9 }).length;
}

const wanted = args;
for (const name of wanted) {
  if (!(name in files)) {
    console.error(`check-size: no entry ${name} in ${ceilings} (known: ${Object.keys(files).join(', ')})`);
    process.exit(2);
  }
}
let failed = false;
for (const [name, { file, gzip, ceiling }] of Object.entries(files)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  const full = path.resolve(ROOT, file);
  if (!existsSync(full)) {
    console.error(`check-size: ${file} is not built`);
    failed = true;
    continue;
  }
  const size = gzipSize(full);
  const line = `${file}: ${size} bytes gzip (figure ${gzip}, ceiling ${ceiling})`;
  if (size > ceiling) {
    console.error(`check-size: ${line}: over the ceiling by ${size - ceiling} bytes. Make it smaller, or raise the`
      + ' ceiling in scripts/size-ceiling.json (with the new figure) as a reviewed change.');
    failed = true;
  } else {
    console.log(`check-size: ${line}`);
  }
}
process.exit(failed ? 1 : 0);
