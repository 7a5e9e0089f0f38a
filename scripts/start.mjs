// `npm start`: rebuild the bundle when a source file is newer than it, then start the app in a
// scratch workspace of its own, never in Legion's source tree (the demo writes files there).
// The workspace: $LEGION_START_WORKSPACE, else $XDG_DATA_HOME/legion/start-workspace, else
// ~/.local/share/legion/start-workspace. It persists, so the next `npm start` resumes its run.
// `npm start -- --cwd <dir>` works in <dir> instead. The first screen names the workspace.
import { mkdirSync, statSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
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

/** The scratch workspace of `npm start` (see above). */
function startWorkspace(env = process.env) {
  if (env.LEGION_START_WORKSPACE) return resolve(env.LEGION_START_WORKSPACE);
  const data = env.XDG_DATA_HOME ? resolve(env.XDG_DATA_HOME) : join(env.HOME || homedir(), '.local', 'share');
  return join(data, 'legion', 'start-workspace');
}

let bundle = 0;
try { bundle = Math.min(statSync('dist/legion.js').mtimeMs, statSync('dist/legion').mtimeMs); } catch { /* not built */ }
const sources = Math.max(newest('src'), newest('components'), newest('bin'), statSync('package.json').mtimeMs);
if (sources > bundle) {
  const built = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
const args = process.argv.slice(2);
if (!args.includes('--cwd')) {
  const workspace = startWorkspace();
  mkdirSync(workspace, { recursive: true });
  args.unshift('--cwd', workspace);
}
// The `legion` command (dist/legion: the build's start-up snapshot when this Node made it),
// with this Node first on PATH, which the command starts.
const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` };
const run = spawnSync('dist/legion', args, { stdio: 'inherit', env });
process.exit(run.status ?? 1);
