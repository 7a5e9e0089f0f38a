// Run every test file under test/ (unit, integration, tui, e2e) with node's test runner via tsx.
// Node 20's --test does not expand globs, so the file list is built here.
// Usage: node scripts/test.mjs [filter|file...]   (filters match file paths; a file is run as given)
//
// The run has a home of its own (scripts/test-home.mjs, docs/development.md#a-home-of-its-own):
// a temporary HOME, XDG folders, TMPDIR and tmux folder, removed afterwards. The user's Legion
// folders and git config are stamped before and after: a change that names the run's folders
// fails the run; any other change there is reported (a `legion` started beside the run changes
// them too), and fails the run only with LEGION_TEST_STRICT_HOME=1. An interrupt
// (Ctrl+C, SIGTERM, SIGHUP) reaches the tests, and the run's folders are removed (exit 128 + signal).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { makeTestHome, stampPlaces, superviseRun, verdictOnPlaces, watchedPlaces } from './test-home.mjs';

const suites = ['test/unit', 'test/integration', 'test/tui', 'test/e2e'];
const args = process.argv.slice(2);

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

const isFile = (path) => { try { return statSync(path).isFile(); } catch { return false; } };
// An argument naming a file runs that file (one outside the suites too); any other filters.
const named = args.filter(isFile).map((f) => join(f));
const filters = args.filter((a) => !isFile(a));
const files = [...new Set([
  ...named,
  ...(filters.length === 0 && named.length > 0 ? [] : suites.flatMap(walk).filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))),
])];

// Everything, the e2e suites' build too, runs in the run's home: nothing reaches the user's folders.
const places = watchedPlaces(process.env);
const before = stampPlaces(places);
const run = makeTestHome(process.env);
const supervisor = superviseRun(run);
const env = { ...run.env, FORCE_COLOR: '0', LEGION_TEST: '1' };
let status = 0;
try {
  if (files.some((f) => f.startsWith('test/e2e'))) status = await supervisor.run(process.execPath, ['scripts/build.mjs'], { env: run.env });
  if (status === 0) {
    status = await supervisor.run(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files], { env });
  }
} finally {
  supervisor.finish();
}

const verdict = verdictOnPlaces(before, places, run);
if (verdict.lines.length > 0) console.error(`\n${verdict.lines.join('\n')}`);
if (verdict.fail) status = status || 1;
process.exit(status);
