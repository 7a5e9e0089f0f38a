import { createHash } from 'node:crypto';
import { join, relative } from 'node:path';
import { definitionFiles } from '../../mcp/trust-files';
import { createTrustStore, type Definition, type TrustCheck, type TrustStore } from '../../mcp/trust';
import type { HookEntry } from './load';

/** The name the workspace's hooks are trusted under (one approval covers them all). */
const TRUST_NAME = 'hooks';

/**
 * Trust of the workspace's hooks (docs/conventions.md#hooks-trust), as MCP servers: kept in the
 * user's config folder (`hooks-trust.json`), never in the workspace; one approval covers the
 * workspace's hook definitions (event, matcher, command, timeout, file) and the content of the
 * workspace files their commands run (`.claude/hooks/check.sh`, a program found on a PATH folder
 * inside the workspace: its sha256), so an agent that
 * rewrites a hook script makes the hooks untrusted again.
 */
export interface HooksTrust {
  readonly file: string;
  check(hooks: readonly HookEntry[]): Promise<TrustCheck>;
  trust(hooks: readonly HookEntry[]): Promise<void>;
  revoke(): Promise<boolean>;
}

export function hooksTrustFile(userDir: string): string {
  return join(userDir, 'hooks-trust.json');
}

export function createHooksTrust(options: { readonly file: string; readonly workspaceRoot: string; readonly env: Readonly<Record<string, string | undefined>> }): HooksTrust {
  const store: TrustStore = createTrustStore(options.file);
  const root = options.workspaceRoot;
  const definition = (hooks: readonly HookEntry[]): Promise<Definition> => workspaceDefinition(hooks, root, options.env);
  return {
    file: options.file,
    check: async (hooks) => store.check(root, TRUST_NAME, await definition(hooks)),
    trust: async (hooks) => store.trust(root, TRUST_NAME, await definition(hooks)),
    revoke: () => store.revoke(root, TRUST_NAME),
  };
}

async function workspaceDefinition(hooks: readonly HookEntry[], root: string, env: Readonly<Record<string, string | undefined>>): Promise<Definition> {
  const own = hooks.filter((h) => h.fromWorkspace);
  const fingerprint = createHash('sha256')
    .update(JSON.stringify(own.map((h) => [h.event, h.matcher ?? null, h.command, h.timeoutMs, relative(root, h.file)])))
    .digest('hex');
  const files: Record<string, string> = {};
  for (const hook of own) {
    // `$CLAUDE_PROJECT_DIR/.claude/hooks/x.sh` names a workspace file as surely as `.claude/hooks/x.sh`.
    const words = expandProjectDir(hook.command, root).replace(/["']/g, '');
    Object.assign(files, await definitionFiles({ kind: 'stdio', command: 'sh', args: ['-c', words], env: {}, cwd: root }, root, env));
    // A program named bare (`ruff format`, `lint-check`) is found on PATH, which may name a folder of
    // the workspace (an activated `.venv/bin`): then it is a workspace file the hook runs, hashed as an
    // MCP server's command is. Every bare word is looked up (an argument found there is pinned too).
    for (const name of new Set(words.split(/[\s;&|()<>`$]+/).filter((w) => BARE_NAME.test(w)))) {
      Object.assign(files, await definitionFiles({ kind: 'stdio', command: name, args: [], env: {}, cwd: root }, root, env));
    }
  }
  return { fingerprint, files };
}

/** A word that may name a program found on PATH: no slash, no assignment, no option. */
const BARE_NAME = /^[\w.+][\w.+-]*$/;

/** `$CLAUDE_PROJECT_DIR`, `${CLAUDE_PROJECT_DIR}` (and Legion's `LEGION_PROJECT_DIR`) replaced by the workspace root. */
export function expandProjectDir(command: string, root: string): string {
  return command.replace(/\$\{?(CLAUDE|LEGION)_PROJECT_DIR\}?/g, root);
}
