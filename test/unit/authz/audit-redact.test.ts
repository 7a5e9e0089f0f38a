import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redact, secretsFromEnv } from '../../../src/authz/redact';

const pem = [
  '-----BEGIN RSA PRIVATE KEY-----',
  'MIIEowIBAAKCAQEAvXk3mQz9Yb1p0f3S2mXh9',
  'c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2Vj',
  '-----END RSA PRIVATE KEY-----',
].join('\n');

// [name, text containing the secret, the secret itself, what the redacted text should contain]
const kinds: Array<[string, string, string, RegExp]> = [
  ['anthropic key', 'ANTHROPIC_API_KEY=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345-_x', 'sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345-_x', /sk-ant-\[REDACTED\]/],
  ['openai key', 'use sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 here', 'sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789', /use sk-\[REDACTED\] here/],
  ['legacy openai key', 'sk-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghij', 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghij', /^sk-\[REDACTED\]$/],
  ['github token', 'git clone https://ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789@github.com/x/y', 'ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789', /https:\/\/ghp_\[REDACTED\]@github/],
  ['github fine-grained pat', 'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz', '0123456789_abcdefghijklmnopqrstuvwxyz', /github_pat_\[REDACTED\]/],
  ['slack token', 'SLACK=xoxb-123456789012-1234567890123-AbCdEfGhIjKl', 'xoxb-123456789012-1234567890123-AbCdEfGhIjKl', /xoxb-\[REDACTED\]/],
  ['aws access key id', 'aws_access_key_id AKIAIOSFODNN7EXAMPLE', 'AKIAIOSFODNN7EXAMPLE', /AKIA\[REDACTED\]/],
  ['bearer token', 'curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig" x', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig', /Bearer \[REDACTED\]/],
  ['password=', 'mysql --password=hunter2secret -u root', 'hunter2secret', /--password=\[REDACTED\] -u root/],
  ['token=', 'https://x.test/cb?token=abc123def456&page=2', 'abc123def456', /token=\[REDACTED\]&page=2/],
  ['secret=', 'CLIENT_SECRET=s3cr3tValue npm start', 's3cr3tValue', /CLIENT_SECRET=\[REDACTED\] npm start/],
  ['quoted value with spaces', 'password: "correct horse battery"', 'correct horse battery', /password: "\[REDACTED\]"/],
  ['JSON member', '{"api_key":"k-998877665544","path":"a.txt"}', 'k-998877665544', /"api_key":"\[REDACTED\]","path":"a.txt"/],
  ['escaped quotes inside JSON', JSON.stringify({ command: 'export DB_PASSWORD="two words" && run' }), 'two words', /DB_PASSWORD=\\"\[REDACTED\]\\" && run/],
  ['PEM private key', pem, 'MIIEowIBAAKCAQEAvXk3mQz9Yb1p0f3S2mXh9', /-----BEGIN RSA PRIVATE KEY-----\[REDACTED\]-----END RSA PRIVATE KEY-----/],
  ['PEM inside JSON', JSON.stringify({ content: pem }), 'c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2Vj', /PRIVATE KEY-----\[REDACTED\]-----END/],
  ['PEM cut short', '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA', 'b3BlbnNzaC1rZXktdjEAAAAA', /OPENSSH PRIVATE KEY-----\[REDACTED\]/],
];

for (const [name, text, secret, expected] of kinds) {
  test(`redact: ${name}`, () => {
    const out = redact(text);
    assert.ok(!out.includes(secret), `${name} leaked: ${out}`);
    assert.match(out, expected);
  });
}

test('redact: literal secrets (provider keys from the environment) wherever they appear', () => {
  const key = 'not-a-known-shape-0123456789';
  const out = redact(`a ${key} b ${JSON.stringify({ k: key })}`, [key]);
  assert.equal(out, 'a [REDACTED] b {"k":"[REDACTED]"}');
  assert.equal(redact('abc def', ['abc']), 'abc def', 'too-short secrets are ignored');
});

test('redact leaves ordinary text alone', () => {
  const plain = [
    'git status && git log --oneline -5',
    '{"path":"src/token.ts","content":"export const x = 1"}',
    'the task is to skim the docs',
    'ssh-keygen -t ed25519',
  ];
  for (const text of plain) assert.equal(redact(text), text);
});

test('secretsFromEnv picks the provider key variables that are set', () => {
  assert.deepEqual(secretsFromEnv({ ANTHROPIC_API_KEY: ' sk-ant-x ', OPENAI_API_KEY: '', HOME: '/root' }), ['sk-ant-x']);
  assert.deepEqual(secretsFromEnv({}), []);
});
