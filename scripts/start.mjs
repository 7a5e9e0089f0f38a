// `npm start`: rebuild the bundle when a source file is newer than it, then start the app.
import { statSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function newest(dir) {
  let t = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const s = statSync(path);
    t = Math.max(t, s.isDirectory() ? newest(path) : s.mtimeMs);
  }
  return t;
}

let bundle = 0;
try { bundle = statSync('dist/legion.js').mtimeMs; } catch { /* not built */ }
const sources = Math.max(newest('src'), newest('components'), newest('bin'), statSync('package.json').mtimeMs);
if (sources > bundle) {
  const built = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
const run = spawnSync(process.execPath, ['dist/legion.js', ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(run.status ?? 1);
