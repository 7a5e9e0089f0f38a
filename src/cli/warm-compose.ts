// Composing a run once while a V8 start-up snapshot builds (docs/performance.md#the-start-up-snapshot).
import { mkdtemp, mkdir, readdir, rmdir, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandContext } from './command';
import type { CliIo } from './io';
import { composeApp, type AppSession } from './compose';
import { forgetHostPaths } from '../tools/host-path';
import { commandWord, parseArgs } from './args';
import { DEFAULT_COMMAND } from './commands';
import { attachChoice, serverToAttach } from './attach';

/** What the process holds that a composition could leave behind: listeners per event, timers and handles. */
export function processFootprint(): string {
  const listeners = process.eventNames().map((name) => `${String(name)}:${process.listenerCount(name)}`).sort();
  return JSON.stringify({ listeners, resources: [...process.getActiveResourcesInfo()].sort() });
}

/**
 * Read a plain start's arguments, look for a server, and compose a run twice (a new workspace
 * and run, then the same run resumed; `onComposed` is handed the first, for the build to draw
 * the first screen of it: components/warm-render.tsx), each closed at
 * once, against a throwaway workspace and home folder that are removed afterwards. Run by the
 * snapshot build (bin/legion.ts): V8 keeps the bytecode of functions compiled while a snapshot
 * builds, so a start from it composes with the composition's functions compiled (a start from
 * a snapshot has no code cache; compiling them was ~17 ms of a start's ~27 ms of composing).
 *
 * Nothing of it may stay in the heap: the environment it sees is only the throwaway HOME (no
 * API key: the demo's path, the one a first start takes), it never starts what a screen starts
 * after its first frame (sandbox probe, checkpoints, MCP servers), the run's close releases the
 * lock and unhooks the process's exit, and the folder goes; Buffer's small allocations come
 * from a pool of their own meanwhile (`freshBufferPool`). Module state the composition
 * reaches is keyed by file text (the shipped rules and prices, kept anyway), weakly by
 * objects dropped here, or is forgotten here (`hostPath`'s PATHs, keyed by workspace); what is
 * read once from the machine and kept (the hooks' shell, the HTTP modules) is reached by running a hook or a model call, never by composing.
 * test/unit/build/warm-compose.test.ts checks that no string of the throwaway run (its
 * folder, run id) survives a full GC, and that the process's listeners, timers and handles are
 * those of before; the build scans the blob for the folder's name (scripts/snapshot.mjs).
 * Throws when the footprint differs afterwards (the build then fails).
 */
export async function warmCompose(appDir: string, base: string = tmpdir(), onComposed?: (app: AppSession) => Promise<unknown>): Promise<void> {
  const before = processFootprint();
  freshBufferPool();
  const dir = await mkdtemp(join(base, 'legion-warm-compose-'));
  try {
    const workspaceRoot = join(dir, 'workspace');
    const home = join(dir, 'home');
    await mkdir(workspaceRoot);
    await mkdir(home);
    const io: CliIo = { stdout: () => undefined, stderr: () => undefined, env: { HOME: home }, cwd: workspaceRoot, isTTY: true };
    // As `main` reads a plain `legion` (src/cli/main.ts), and as the screen looks for a server first (start-screen.ts).
    if (commandWord([], DEFAULT_COMMAND.flags) !== null) throw new Error('snapshot warm-up: a plain start names a command');
    const args = parseArgs([], { [DEFAULT_COMMAND.name]: DEFAULT_COMMAND.flags }, DEFAULT_COMMAND.name);
    const context: CommandContext = { args, io, appDir, workspaceRoot };
    if ((await serverToAttach(context, attachChoice(context))) !== null) throw new Error('snapshot warm-up: a server runs in a new folder');
    for (const newRun of [true, false]) {
      const app = await composeApp(context, { newRun });
      try {
        // A first start's `.legion/` is the user's, trusted: warmed otherwise, the snapshot holds another path than a start's.
        if (!app.trust.trusted) throw new Error(`snapshot warm-up: the throwaway workspace is not trusted (${app.trust.detail})`);
        if (newRun) await onComposed?.(app);
      } finally {
        await app.close('snapshot warm-up');
      }
    }
  } finally {
    await removeTree(dir);
    forgetHostPaths();
  }
  await settled(before);
  freshBufferPool();
}

/**
 * Remove a folder and what it holds (symbolic links are removed, not followed). Not `fs.rm`:
 * its recursive mode loads Node's rimraf, whose module-level separator, a Buffer from Buffer's
 * pool, would keep that pool (bytes of the throwaway run) alive in the snapshot.
 */
async function removeTree(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await removeTree(path);
    else await unlink(path);
  }
  await rmdir(dir);
}

/**
 * Give Buffer a new pool for its small allocations (`Buffer.allocUnsafe`, `Buffer.from` of a
 * short string come from an 8 kB pool), zeroed: the bytes a throwaway run left in the previous
 * pool (file contents, paths, a key) stay only there, which is garbage once no buffer holds it,
 * and the new pool holds none of the builder's uninitialised memory. Buffers already taken from
 * the old pool keep their bytes.
 */
export function freshBufferPool(): void {
  const old = Buffer.allocUnsafe(1).buffer;
  for (let i = 0; i < 8; i++) {
    const taken = Buffer.allocUnsafe(Buffer.poolSize >>> 2);
    if (taken.buffer !== old) {
      // The new pool holds only `taken` (this function's own, dropped): all of it can be zeroed.
      new Uint8Array(taken.buffer).fill(0);
      return;
    }
  }
  throw new Error('snapshot warm-up: Buffer did not start a new pool');
}

/** Wait a few turns of the event loop for what the close scheduled; throw if the process is left with more than before. */
async function settled(before: string): Promise<void> {
  for (let turn = 0; turn < 200; turn++) {
    if (processFootprint() === before) return;
    await new Promise<void>((resolve) => setTimeout(resolve, 1));
  }
  throw new Error(`snapshot warm-up: composing left the process changed: before ${before}, after ${processFootprint()}`);
}
