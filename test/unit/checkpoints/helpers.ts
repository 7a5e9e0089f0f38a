import { chmod, lstat, mkdir, readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { openCheckpointStore, type CheckpointStore } from '../../../src/checkpoints/store';

/** Every file of a directory tree (not `.legion/` nor `.git/`) with its bytes and mode, for exact comparison. */
export async function treeState(root: string, dir = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(join(root, dir))).sort()) {
    if (dir === '' && (name === '.legion' || name === '.git')) continue;
    const rel = dir ? `${dir}/${name}` : name;
    const info = await lstat(join(root, rel));
    if (info.isDirectory()) {
      out[`${rel}/`] = 'dir';
      Object.assign(out, await treeState(root, rel));
    } else if (info.isSymbolicLink()) out[rel] = `link -> ${await readlink(join(root, rel))}`;
    else out[rel] = `${(info.mode & 0o777).toString(8)} ${(await readFile(join(root, rel))).toString('base64')}`;
  }
  return out;
}

export async function put(root: string, rel: string, text: string, mode = 0o644): Promise<void> {
  await mkdir(join(root, rel, '..'), { recursive: true });
  await writeFile(join(root, rel), text);
  await chmod(join(root, rel), mode);
}

export function openStore(root: string, options: { watch?: boolean; maxFileBytes?: number } = {}): Promise<CheckpointStore> {
  return openCheckpointStore({ workspaceRoot: root, maxFileBytes: options.maxFileBytes ?? 1_000_000, watch: options.watch });
}

export const subject = (sessionId = 'session-user__scribe__default', participantId = 'scribe', turn = 1) => ({
  runId: 'run-1', sessionId, participantId, toolUseIds: ['tu-1'], toolNames: ['file_write'], turn,
});

/** Run git in the user's own repository (not the shadow one). */
export function userGit(root: string, args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@t', ...args], {
    cwd: root, encoding: 'utf8', env: cleanEnv(),
  });
}

function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith('GIT_')) delete env[key];
  // The test's own status must not refresh the index behind the comparison's back.
  return { ...env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_OPTIONAL_LOCKS: '0' };
}
