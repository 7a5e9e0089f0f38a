import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { commandWord, parseArgs } from '../../../src/cli/args';
import type { FlagSpec } from '../../../src/cli/args';

const specs: Record<string, FlagSpec> = { start: { resume: 'value', new: 'boolean' }, run: { workflow: 'value', json: 'boolean', tag: 'values' } };

test('args: flags before the command are the default command\'s, after it the command\'s; globals anywhere', () => {
  const a = parseArgs(['--cwd', 'w', 'run', '--tag', 'a', 'x', '--tag=b', '-h', '--json'], specs, 'start');
  assert.equal(a.command, 'run');
  assert.deepEqual(a.positionals, ['x']);
  assert.equal(a.global.cwd, 'w');
  assert.equal(a.global.help, true);
  assert.deepEqual([...a.flags], [['tag', 'b'], ['json', true]]);
  assert.deepEqual(a.lists?.get('tag'), ['a', 'b']);
  assert.equal(parseArgs(['--resume', 'r1'], specs, 'start').flags.get('resume'), 'r1');
  assert.throws(() => parseArgs(['--workflow', 'w', 'run'], specs, 'start'), /unknown flag "--workflow" \(see/);
});

test('args: `--` ends the flags (before a command: the default one); errors are exit 2 with one line', () => {
  assert.deepEqual(parseArgs(['--', 'run', '--json'], specs, 'start').positionals, ['run', '--json']);
  assert.deepEqual(parseArgs(['run', '--', '--json', '-h'], specs, 'start').positionals, ['--json', '-h']);
  const cases: [string[], RegExp][] = [
    [['nope'], /^unknown command "nope"/],
    [['run', '--frob'], /^unknown flag "--frob" for "run"/],
    [['-hv'], /^unknown flag "-hv"/],
    [['run', '--workflow'], /^flag "--workflow" needs a value$/],
    [['run', '--workflow', '--json'], /^flag "--workflow" needs a value$/],
    [['run', '--json=1'], /^flag "--json" takes no value$/],
  ];
  for (const [argv, message] of cases) {
    assert.throws(() => parseArgs(argv, specs, 'start'), (e: Error & { exitCode?: number }) => message.test(e.message) && e.exitCode === 2, argv.join(' '));
  }
  assert.equal(parseArgs(['run', '--workflow=--json'], specs, 'start').flags.get('workflow'), '--json', 'an inline value may start with --');
});

test('commandWord: the first positional, flags before it read with the default command\'s spec (as parseArgs reads them)', () => {
  const start = { run: 'value', new: 'boolean' } as const;
  assert.equal(commandWord([], start), null);
  assert.equal(commandWord(['--new'], start), null);
  assert.equal(commandWord(['worker', '--listen', 'x'], start), 'worker');
  // `--run` takes a value: `doctor` is that value, not the command word.
  assert.equal(commandWord(['--run', 'doctor', 'run', 'hi'], start), 'run');
  assert.equal(commandWord(['--cwd', '/tmp', 'doctor'], start), 'doctor');
  assert.equal(commandWord(['--', 'doctor'], start), null);
  for (const argv of [['--run', 'doctor', 'run', 'hi'], ['--cwd', '/tmp', 'doctor'], ['init']]) {
    assert.equal(commandWord(argv, start), parseArgs(argv, { start, run: {}, doctor: {}, init: {} }, 'start').command, argv.join(' '));
  }
});
