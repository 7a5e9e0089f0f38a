/**
 * `${VAR}` and `${VAR:-default}` expansion from the environment (the `.mcp.json` convention
 * of Claude Code). `$$` is not special; a `${…}` that is not a valid name stays as written.
 * Unset variables without a default are reported in `missing` (and expand to "").
 */
export function expandVars(text: string, env: Readonly<Record<string, string | undefined>>): { text: string; missing: string[] } {
  const missing: string[] = [];
  const out = text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_all, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    if (value === undefined) missing.push(name);
    return '';
  });
  return { text: out, missing };
}
