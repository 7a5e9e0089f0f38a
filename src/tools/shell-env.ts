import { CREDENTIAL_VARIABLES } from '../providers/credentials';

/**
 * The environment `shell` commands get, sandboxed or not (docs/sandbox.md#environment): an
 * allow-list, so tokens in Legion's own environment ($LEGION_TELEGRAM_TOKEN, $GITHUB_TOKEN,
 * $AWS_SECRET_ACCESS_KEY…) never reach an agent's command. `PREFIX*` names every variable
 * starting with PREFIX.
 */
export const SHELL_ENV_ALLOWED: readonly string[] = ['PATH', 'HOME', 'USER', 'LANG', 'LC_*', 'TERM', 'TZ', 'TMPDIR'];

/** Set for every command: no pager waits on the closed stdin, git never prompts. */
const FIXED: Readonly<Record<string, string>> = { PAGER: 'cat', GIT_PAGER: 'cat', GIT_TERMINAL_PROMPT: '0' };

/**
 * The variables of `source` named by SHELL_ENV_ALLOWED or `passThrough` (the config's
 * `sandbox.env`), plus the fixed ones. Legion's provider credentials never pass, even when listed.
 */
export function shellEnvironment(source: Readonly<Record<string, string | undefined>>, passThrough: readonly string[] = []): Record<string, string> {
  const names = [...SHELL_ENV_ALLOWED, ...passThrough];
  const exact = new Set(names.filter((n) => !n.endsWith('*')));
  const prefixes = names.filter((n) => n.endsWith('*')).map((n) => n.slice(0, -1));
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined || CREDENTIAL_VARIABLES.includes(name)) continue;
    if (exact.has(name) || prefixes.some((p) => name.startsWith(p))) out[name] = value;
  }
  if (out.PATH !== undefined) out.PATH = absolutePath(out.PATH);
  return { ...out, ...FIXED };
}

/**
 * PATH without the entries that name the working directory — an empty entry (`/usr/bin:`,
 * `::`), `.` or any relative one: commands run in the workspace, so with those bash would run
 * a `git` or `cat` planted there (a cloned repository's file) for an allowed `git status`.
 */
function absolutePath(path: string): string {
  return path
    .split(':')
    .filter((entry) => entry.startsWith('/'))
    .join(':');
}
