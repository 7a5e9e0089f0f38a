import { CREDENTIAL_VARIABLES } from '../providers/credentials';
/**
 * Secret redaction for anything Legion writes or prints about tool inputs (audit log,
 * ledger previews, `--json`). Contract: the result never contains a literal `secrets`
 * value (of 6+ characters) nor a token of the kinds below; it keeps a short prefix naming
 * the kind (`sk-ant-[REDACTED]`, `password=[REDACTED]`) so a reader still sees what was there.
 * Redact before truncating: a cut token might no longer match.
 *
 * Time is linear in the input on any text (it runs synchronously on every tool input, so a
 * quadratic pattern would freeze the app): every token pattern starts with a literal prefix
 * at a word boundary and can only fail early or at the end of one run of token characters;
 * the `key=value` form is found run by run, without regex backtracking over the key.
 * `npm run bench -- redact` measures 1 MB adversarial inputs.
 */
export const REDACTED = '[REDACTED]';

/** Literal secrets shorter than this are ignored (redacting "ab" everywhere would shred text). */
export const MIN_SECRET_LENGTH = 6;

const PEM = /-----BEGIN ([A-Z0-9 ]{0,64})PRIVATE KEY-----[\s\S]*?(?:-----END \1PRIVATE KEY-----|$)/g;

/**
 * Token shapes: [pattern, literal hints]. Each pattern's group 1 (the prefix naming the kind) is
 * kept, the rest replaced. A pattern runs only when one of its hints occurs in the text (a
 * fast substring search), so a large input pays for the kinds it might hold, not for all.
 */
const TOKENS: ReadonlyArray<readonly [RegExp, readonly string[]]> = [
  [/\b(sk-ant-)[A-Za-z0-9_-]{8,}/g, ['sk-ant-']], // Anthropic
  [/\b(sk-)(?!ant-)[A-Za-z0-9_-]{16,}/g, ['sk-']], // OpenAI (sk-…, sk-proj-…)
  [/\b(gh[pousr]_)[A-Za-z0-9]{20,}/g, ['gh']], // GitHub tokens
  [/\b(github_pat_)[A-Za-z0-9_]{20,}/g, ['github_pat_']],
  [/\b(xox[abposr]-)[A-Za-z0-9-]{8,}/g, ['xox']], // Slack
  [/\b((?:AKIA|ASIA))[0-9A-Z]{16}\b/g, ['AKIA', 'ASIA']], // AWS access key ids
  [/\b(AIza)[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/g, ['AIza']], // Google API keys
  [/\b((?:sk|rk)_(?:live|test)_)[A-Za-z0-9]{10,}/g, ['k_live_', 'k_test_']], // Stripe secret and restricted keys
  [/\b(npm_)[A-Za-z0-9]{36}(?![A-Za-z0-9])/g, ['npm_']], // npm access tokens
  [/\b(glpat-)[A-Za-z0-9_-]{20,}/g, ['glpat-']], // GitLab personal access tokens
  [/\b(hf_)[A-Za-z0-9]{30,}/g, ['hf_']], // Hugging Face tokens
  // Authorization headers, before JWTs: the whole header value goes.
  [/\b((?:[Bb]earer|BEARER|[Bb]asic)\s+)[A-Za-z0-9._~+/=-]{8,}/g, ['earer', 'EARER', 'asic']],
  [/\b(eyJ)[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g, ['eyJ']], // JWTs (header.payload.signature)
];

/** A word that makes a key name a secret (the key is the whole run of key characters around it). */
const SECRET_WORD = /password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential/gi;
/**
 * What follows such a key: group 1 = separator, 2 = value (JSON-escaped-quoted,
 * double-quoted, single-quoted or bare). Each value form scans to its first closing quote.
 */
const SEPARATOR_VALUE = /(\\?["']?\s*[:=]\s*)(\\"(?:[^\\]|\\(?!"))*\\"|"(?:[^"\\]|\\.)*"|'[^']*'|[^\s"'&;,}\]]+)/y;

export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= MIN_SECRET_LENGTH) out = out.split(secret).join(REDACTED);
  }
  out = out.replace(PEM, (_m, kind: string) => `-----BEGIN ${kind}PRIVATE KEY-----${REDACTED}-----END ${kind}PRIVATE KEY-----`);
  for (const [pattern, hints] of TOKENS) {
    if (hints.some((hint) => out.includes(hint))) out = out.replace(pattern, (_m, prefix: string) => `${prefix}${REDACTED}`);
  }
  return redactKeyValues(out);
}

/**
 * `key=value`, `key: value`, `"key":"value"` where the key (a whole run of key characters)
 * names a secret. Linear: one regex pass finds the secret words; each key run is then scanned
 * once to its end, and the search resumes after the key (or after the value it redacted).
 */
function redactKeyValues(text: string): string {
  let out = '';
  let copied = 0;
  SECRET_WORD.lastIndex = 0;
  for (let hit = SECRET_WORD.exec(text); hit; hit = SECRET_WORD.exec(text)) {
    // The key runs on to the end of its run; the next search starts after it (each run once).
    let end = hit.index + hit[0].length;
    while (end < text.length && isKeyChar(text.charCodeAt(end))) end++;
    SEPARATOR_VALUE.lastIndex = end;
    const m = SEPARATOR_VALUE.exec(text);
    if (!m) {
      SECRET_WORD.lastIndex = end;
      continue;
    }
    const [whole, sep, value] = m as unknown as [string, string, string];
    if (!value.includes('[REDACTED')) {
      out += text.slice(copied, end) + sep + quoteLike(value);
      copied = end + whole.length;
    }
    SECRET_WORD.lastIndex = end + whole.length;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** `[A-Za-z0-9_.-]`: the characters of a key. */
function isKeyChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 46 || c === 45;
}

function quoteLike(value: string): string {
  if (value.startsWith('\\"')) return `\\"${REDACTED}\\"`;
  if (value.startsWith('"')) return `"${REDACTED}"`;
  if (value.startsWith("'")) return `'${REDACTED}'`;
  return REDACTED;
}

/** The values of the provider credential variables present in `env`, for `redact(text, secrets)`. */
export function secretsFromEnv(env: Readonly<Record<string, string | undefined>>): string[] {
  return CREDENTIAL_VARIABLES.map((n) => env[n]?.trim()).filter((v): v is string => v !== undefined && v.length > 0);
}
