/**
 * 1 MB inputs built to make a backtracking regex slow (long runs of key characters, keyword
 * repeats, token prefixes without a valid end, unclosed quotes), for the redaction test and
 * the `redact` bench.
 */
const SIZE = 1 << 20;
const fill = (unit: string): string => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);

export const ADVERSARIAL_INPUTS: Readonly<Record<string, string>> = {
  letters: fill('a'),
  hex: fill('0123456789abcdef'),
  base64: fill('QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0123+/'),
  keywords: fill('token'),
  keywordsAndDots: fill('password.secret-'),
  separators: fill('token='),
  quotes: fill('token="'),
  jsonQuotes: fill('token=\\"'),
  jwtHeads: fill('eyJ'),
  jwtNoSignature: fill('eyJabcd.'),
  tokenPrefixes: fill('sk-ant-'),
  stripePrefixes: fill('sk_live_'),
  bearers: fill('Bearer '),
  pemHeads: fill('-----BEGIN '),
  spaces: `password${' '.repeat(SIZE)}`,
};
