/**
 * Secret path globs hidden from sandboxed commands when the rules give none: the same
 * files the shipped `no-secrets` rule keeps from the file tools (config/rules.yaml).
 * Normally the patterns come from the loaded rules (src/authz/rules/secret-paths.ts).
 */
export const DEFAULT_SECRET_PATTERNS: readonly string[] = [
  '**/.env', '**/.env.*', '**/.envrc', '**/*.pem', '**/*.key', '**/*.p12', '**/*.pfx',
  '**/id_rsa*', '**/id_dsa*', '**/id_ecdsa*', '**/id_ed25519*', '**/.ssh/**', '**/.aws/**', '**/.gnupg/**',
  '**/.netrc', '**/.git-credentials', '**/.npmrc', '**/.pypirc', '**/credentials.json', '**/*credentials*.json',
];
