import { CREDENTIAL_VARIABLES } from '../providers/credentials';
/**
 * Secret redaction for anything Legion writes or prints about tool inputs (audit log,
 * ledger previews, `--json`). Contract: the result never contains a literal `secrets`
 * value (of 6+ characters) nor a token of the kinds below; it keeps a short prefix naming
 * the kind (`sk-ant-[REDACTED]`, `password=[REDACTED]`) so a reader still sees what was there.
 * Redact before truncating: a cut token might no longer match.
 */
export const REDACTED = '[REDACTED]';

/** Literal secrets shorter than this are ignored (redacting "ab" everywhere would shred text). */
export const MIN_SECRET_LENGTH = 6;

const PEM = /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?(?:-----END \1PRIVATE KEY-----|$)/g;

/** Token shapes: [pattern, kept prefix group]. Each pattern's group 1 is kept, the rest replaced. */
const TOKENS: readonly RegExp[] = [
  /\b(sk-ant-)[A-Za-z0-9_-]{8,}/g, // Anthropic
  /\b(sk-)(?!ant-)[A-Za-z0-9_-]{16,}/g, // OpenAI (sk-…, sk-proj-…)
  /\b(gh[pousr]_)[A-Za-z0-9]{20,}/g, // GitHub tokens
  /\b(github_pat_)[A-Za-z0-9_]{20,}/g,
  /\b(xox[abposr]-)[A-Za-z0-9-]{8,}/g, // Slack
  /\b((?:AKIA|ASIA))[0-9A-Z]{16}\b/g, // AWS access key ids
  /\b((?:[Bb]earer|BEARER|[Bb]asic)\s+)[A-Za-z0-9._~+/=-]{8,}/g, // Authorization headers
];

/**
 * `key=value`, `key: value`, `"key":"value"` where the key names a secret. Group 1 = key,
 * 2 = separator, 3 = value (double-quoted, JSON-escaped-quoted, single-quoted or bare).
 */
const KEY_VALUE =
  /([A-Za-z0-9_.-]*(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential)[A-Za-z0-9_.-]*)(\\?["']?\s*[:=]\s*)(\\"(?:[^\\]|\\(?!"))*\\"|"(?:[^"\\]|\\.)*"|'[^']*'|[^\s"'&;,}\]]+)/gi;

export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= MIN_SECRET_LENGTH) out = out.split(secret).join(REDACTED);
  }
  out = out.replace(PEM, (_m, kind: string) => `-----BEGIN ${kind}PRIVATE KEY-----${REDACTED}-----END ${kind}PRIVATE KEY-----`);
  for (const pattern of TOKENS) out = out.replace(pattern, (_m, prefix: string) => `${prefix}${REDACTED}`);
  out = out.replace(KEY_VALUE, (match, key: string, sep: string, value: string) => {
    if (value.includes('[REDACTED')) return match;
    if (value.startsWith('\\"')) return `${key}${sep}\\"${REDACTED}\\"`;
    if (value.startsWith('"')) return `${key}${sep}"${REDACTED}"`;
    if (value.startsWith("'")) return `${key}${sep}'${REDACTED}'`;
    return `${key}${sep}${REDACTED}`;
  });
  return out;
}

/** The values of the provider credential variables present in `env`, for `redact(text, secrets)`. */
export function secretsFromEnv(env: Readonly<Record<string, string | undefined>>): string[] {
  return CREDENTIAL_VARIABLES.map((n) => env[n]?.trim()).filter((v): v is string => v !== undefined && v.length > 0);
}
