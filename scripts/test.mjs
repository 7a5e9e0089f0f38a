// Run every test file under test/ (unit, integration, tui, e2e) with node's test runner via tsx.
// Node 20's --test does not expand globs, so the file list is built here.
// Usage: node scripts/test.mjs [filter...]   (filters match file paths)
//
// The run has a home of its own (scripts/test-home.mjs, docs/development.md#a-home-of-its-own):
// a temporary HOME, XDG folders, TMPDIR and tmux folder, removed afterwards. The user's Legion
// folders and git config are stamped before and after: a change that names the run's folders
// fails the run; any other change there fails it in CI (nothing else runs there) and is
// reported elsewhere (a `legion` started beside the run changes them too).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { makeTestHome, stampPlaces, verdictOnPlaces, watchedPlaces } from './test-home.mjs';

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

const places = watchedPlaces(process.env);
const before = stampPlaces(places);
const run = makeTestHome(process.env);
let status;
try {
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files],
    { stdio: 'inherit', env: { ...run.env, FORCE_COLOR: '0', LEGION_TEST: '1' } },
  );
  status = result.status ?? 1;
} finally {
  if (process.env.LEGION_TEST_KEEP_HOME === '1') console.error(`test folders kept: ${run.root} ${run.home}`);
  else run.cleanup();
}

const verdict = verdictOnPlaces(before, places, run);
if (verdict.lines.length > 0) console.error(`\n${verdict.lines.join('\n')}`);
if (verdict.fail) status = status || 1;
process.exit(status);
