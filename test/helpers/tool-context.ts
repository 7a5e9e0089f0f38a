import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolContext } from '../../src/tools/types';

/** A tool context over `workspaceRoot` with test defaults (override any field). */
export function makeToolContext(workspaceRoot: string, overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    workspaceRoot,
    runId: 'run-test',
    sessionId: 'session-user__agent__default',
    participantId: 'agent',
    chain: ['user', 'agent'],
    toolUseId: 'tu-1',
    signal: new AbortController().signal,
    limits: { shellTimeoutMs: 10_000, toolOutputLimit: 30_000 },
    askUser: async () => ({ content: 'no user to ask in a plain tool test', isError: true }),
    ...overrides,
  };
}

/**
 * A temp dir holding `ws/` (the workspace, realpath'd, with a `.legion/` inside) and a
 * sibling `outside/` sentinel directory with one file, to prove nothing escapes.
 */
/** Content of `outside/sentinel.txt`; the marker `0xOUTSIDE` in any tool result means a leak. */
export const SENTINEL_CONTENT = 'do not touch 0xOUTSIDE\n';

export interface Sandbox {
  readonly base: string;
  readonly root: string;
  readonly outside: string;
  /** Sorted listing of everything under `outside/` with each file's content. */
  outsideSnapshot(): Promise<string>;
  cleanup(): Promise<void>;
}

export async function makeSandbox(prefix = 'legion-tools-'): Promise<Sandbox> {
  const base = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  const root = join(base, 'ws');
  const outside = join(base, 'outside');
  await mkdir(join(root, '.legion', 'runs'), { recursive: true });
  await writeFile(join(root, '.legion', 'secret.json'), '{"secret":"legion-state"}\n');
  await mkdir(outside, { recursive: true });
  await writeFile(join(outside, 'sentinel.txt'), SENTINEL_CONTENT);
  const snapshot = async (dir: string, rel = ''): Promise<string[]> => {
    const out: string[] = [];
    for (const name of (await readdir(dir)).sort()) {
      const full = join(dir, name);
      const info = await stat(full);
      if (info.isDirectory()) out.push(`${rel}${name}/`, ...(await snapshot(full, `${rel}${name}/`)));
      else out.push(`${rel}${name}=${await readFile(full, 'utf8')}`);
    }
    return out;
  };
  return {
    base,
    root,
    outside,
    outsideSnapshot: async () => (await snapshot(outside)).join('\n'),
    cleanup: () => rm(base, { recursive: true, force: true }),
  };
}
