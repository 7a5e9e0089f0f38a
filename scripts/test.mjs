// Run every test file under test/ (unit, integration, tui, e2e) with node's test runner via tsx.
// Node 20's --test does not expand globs, so the file list is built here.
// Usage: node scripts/test.mjs [filter...]   (filters match file paths)
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const suites = ['test/unit', 'test/integration', 'test/tui', 'test/e2e'];
const filters = process.argv.slice(2);

function walk(dir) {
  let out = [];
  let names = [];
  try { names = readdirSync(dir); } catch { return out; }
  for (const name of names.sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out = out.concat(walk(path));
    else if (/\.test\.tsx?$/.test(name)) out.push(path);
  }
  return out;
}

const files = suites.flatMap(walk).filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
if (files.some((f) => f.startsWith('test/e2e'))) {
  const built = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files],
  { stdio: 'inherit', env: { ...process.env, FORCE_COLOR: '0', LEGION_TEST: '1' } },
);
process.exit(result.status ?? 1);
