import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { warmStartParsers, warmTemplateParsers } from '../../../src/cli/snapshot-warm';

const CONFIG = resolve('config');
const shipped = (name: string): string | undefined => {
  try {
    return readFileSync(join(CONFIG, name), 'utf8');
  } catch {
    return undefined;
  }
};

test('snapshot warm-up: every YAML file shipped at the top of config/ (each parsed by every start) goes through its parser', () => {
  const warmed = warmStartParsers(shipped);
  const top = readdirSync(CONFIG).filter((n) => /\.ya?ml$/.test(n)).sort();
  assert.deepEqual([...warmed].sort(), top, 'a shipped file a start parses is warmed in the snapshot (src/cli/snapshot-warm.ts)');
});

test('snapshot warm-up: a shipped file missing from the bundle, or one that does not parse, fails the build', () => {
  assert.throws(() => warmStartParsers((name) => (name === 'rules.yaml' ? undefined : shipped(name))), /config\/rules\.yaml is not in the bundle/);
  const broken = (bad: string, text: string) => (name: string) => (name === bad ? text : shipped(name));
  for (const [name, text] of [
    ['rules.yaml', 'version: 1\nrules:\n  - id: x\n    decision: perhaps\n    tool: shell\n'],
    ['legion.yaml', 'ui: 5\n'],
    ['models.yaml', 'models: 5\n'],
    ['demo-script.yaml', 'replies: 5\n'],
  ] as const) {
    assert.throws(() => warmStartParsers(broken(name, text)), new RegExp(`config/${name.replace('.', '\\.')} does not parse`), name);
  }
});

test('snapshot warm-up: every shipped participant template (the default collective, the demo\'s agents) goes through the template and participant-file parsers', () => {
  const names = ['agents', 'demo-agents'].flatMap((dir) => readdirSync(join(CONFIG, dir)).filter((n) => /\.ya?ml$/.test(n)).map((n) => `${dir}/${n}`)).sort();
  assert.ok(names.length >= 4);
  assert.deepEqual(warmTemplateParsers([...names, 'workflows/x.yaml', 'rules.yaml'], shipped).sort(), names, 'only templates, all of them');
  assert.throws(() => warmTemplateParsers(['agents/user.yaml'], () => 'id: 5\n'), /config\/agents\/user\.yaml/);
  assert.throws(() => warmTemplateParsers(['agents/gone.yaml'], () => undefined), /config\/agents\/gone\.yaml is not in the bundle/);
});
