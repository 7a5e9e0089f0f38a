import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseYamlSource, preparseYaml } from '../../../src/config/yaml-source';
import { parseRuleSources } from '../../../src/authz/rules/load';

/** Every YAML file shipped in config/ (what scripts/build.mjs pre-parses into the bundle). */
function shippedYaml(dir = resolve('config')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? shippedYaml(join(dir, e.name)) : /\.ya?ml$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

test('pre-parsed YAML: every shipped file is accepted, and gives the same data and lines as a fresh parse', () => {
  const files = shippedYaml();
  assert.ok(files.length >= 6, `shipped files: ${files.join(', ')}`);
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const entry = preparseYaml(text, file);
    assert.ok(entry, `${file} is not pre-parsed`);
    const fresh = parseYamlSource(text, file, []);
    const cached = parseYamlSource(text, file, [entry]);
    assert.ok(fresh.ok && cached.ok);
    assert.deepEqual(cached.source.data, fresh.source.data, file);
    for (const key of Object.keys(entry.lines)) {
      const path = JSON.parse(key) as (string | number)[];
      assert.equal(cached.source.lineOf(path), fresh.source.lineOf(path), `${file} ${key}`);
    }
  }
});

test('pre-parsed YAML: a path not recorded (or an edited text) is answered by parsing the text', () => {
  const text = 'version: 1\nrules:\n  - id: a\n    decision: allow\n    tool: file_read\n';
  const entry = preparseYaml(text, 'r.yaml')!;
  const cached = parseYamlSource(text, 'r.yaml', [entry]);
  assert.ok(cached.ok);
  assert.equal(cached.source.lineOf(['rules', 0, 'tool']), 5);
  assert.equal(cached.source.lineOf(['rules', 0, 'nope']), 3, 'the nearest existing node, as the parser says');
  const fresh = parseYamlSource(text, 'r.yaml', []);
  assert.ok(fresh.ok);
  assert.equal(cached.source.lineOf(['rules', '0']), fresh.source.lineOf(['rules', '0']), 'a string index is not a sequence index');
  const edited = parseYamlSource(text.replace('file_read', 'grep'), 'r.yaml', [entry]);
  assert.ok(edited.ok);
  assert.equal((edited.source.data as { rules: { tool: string }[] }).rules[0]!.tool, 'grep');
});

test('pre-parsed YAML: each parse gives its own copy of the data', () => {
  const text = 'a: { b: [1, 2] }\n';
  const entry = preparseYaml(text, 'x.yaml')!;
  const one = parseYamlSource(text, 'x.yaml', [entry]);
  const two = parseYamlSource(text, 'x.yaml', [entry]);
  assert.ok(one.ok && two.ok);
  (one.source.data as { a: { b: number[] } }).a.b.push(3);
  assert.deepEqual(two.source.data, { a: { b: [1, 2] } });
});

test('pre-parsed YAML: texts that do not parse, or whose data is not plain JSON, are not pre-parsed', () => {
  assert.equal(preparseYaml('a: [1\n', 'bad.yaml'), null);
  assert.equal(preparseYaml('a: .nan\n', 'nan.yaml'), null);
});

test('pre-parsed YAML: a rules file keeps its rule lines and its errors name the right line', () => {
  const text = 'version: 1\nrules:\n  - id: a\n    decision: allow\n    tool: file_read\n  - id: b\n    decision: maybe\n    tool: grep\n';
  const entry = preparseYaml(text, 'rules.yaml')!;
  const fresh = parseRuleSources([{ file: 'rules.yaml', text }]);
  assert.ok(!fresh.ok);
  const viaCache = parseYamlSource(text, 'rules.yaml', [entry]);
  assert.ok(viaCache.ok);
  assert.equal(viaCache.source.lineOf(['rules', 1, 'decision']), 7);
  assert.match(fresh.error, /^rules\.yaml:7: /);
});
