import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { argvText, parsePlain, scanPlain } from '../../../../src/authz/rules/shell-plain';
import { MAX_SHELL_LENGTH, splitShell } from '../../../../src/authz/rules/shell-split';
import { argvViewsCovered, strictViews } from '../../../../src/authz/rules/shell-views';
import { prng } from '../../../helpers/prng';
import { EXPANSION_CONTEXTS, nearlyPlain, variant, type Rand } from '../shell-variants';

/**
 * The one scan of a plain line (issue #28): scanPlain builds the split deny and ask rules see,
 * so on every plain line it must equal splitShell's, token for token (source form with quotes,
 * unquoted words, redirections in place). Generated lines: plain words with quotes, escapes,
 * line continuations, pipelines, `&&`, `||`, `;`, newlines, comments, `/dev/null`
 * redirections and fd duplications, mutated with shell syntax; plus the bypass variants.
 * LEGION_PLAIN_SPLIT_SEED replays a run.
 */
const SEED = Number(process.env.LEGION_PLAIN_SPLIT_SEED ?? 20261127);
const LINES = 20_000;

const pick = <T>(rand: Rand, items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;

const WORDS = [
  'echo', 'git', 'status', 'ls', '-la', 'src/a.ts', 'HEAD~1', '--opt=v', 'a=b', '*.ts', 'src/?', '[ab]', ']', '{}', 'héllo→', '^x', '%', '@', '+1', ',',
  "'q u'", "'it''s'", '"d q"', '"a\\"b"', '"\\\\"', '"\\$x"', '"\\`"', '"\\x"', '"a\nb"', "'a\\\nb'", '"a\\\nb"', 'a\\\nb', 'a\\ b', '\\x', '\\\'', '\\"', '""', "''",
  "x'y'\"z\"w", '12', '1\\\n2', '"1"', 'a~', 'x\\=1',
];
/** Words that are not plain (drawn now and then: the line must then have no split). */
const OTHER_WORDS = ['~', 'a=~', '#', 'a#b', '{a,b}', '$x', '"$x"', '$(m1)', '`m1`', '(', 'a{b'];
const REDIRECTIONS = [
  '2>&1', '>&2', '>&-', '1>&2', '>& 2', '2>/dev/null', '> /dev/null', '>/dev/null', '</dev/null', '&>/dev/null', '&>>/dev/null', '>>/dev/null', '>|/dev/null',
  '<>/dev/null', '2> "/dev/null"', ">/dev/nu'll'", '>/dev/nu\\\nll', '12>/dev/null', '3<&0', '"2">/dev/null', '2\\>/dev/null',
];
const OTHER_REDIRECTIONS = ['>out.txt', '<<<x', '<<EOF', '>(m1)', '<(m1)', '>&2x', '>', '2>'];
const SEPARATORS = [' ; ', ';', ' && ', '&&', ' || ', '||', ' | ', '|', '\n', '\n\n', ' \\\n ', ';\n', ' & ', ' |& ', ';;', '\t'];
const SYNTAX = ['$', '(', ')', '{', '}', '#', '&', '!', '\\', "'", '"', '*', '<', '>', '\n', ';', '|', '~', ' ', '\t', '\\\n', '=', '{}', '[', ']'];

function piece(rand: Rand): string {
  const r = rand();
  if (r < 0.02) return pick(rand, OTHER_WORDS);
  if (r < 0.04) return pick(rand, OTHER_REDIRECTIONS);
  return r < 0.25 ? pick(rand, REDIRECTIONS) : pick(rand, WORDS);
}

function plainish(rand: Rand): string {
  let line = pick(rand, ['', ' ', '\n', '\\\n']);
  const commands = 1 + Math.floor(rand() * 4);
  for (let c = 0; c < commands; c++) {
    if (c > 0) line += pick(rand, SEPARATORS);
    line += pick(rand, ['echo', 'git', 'ls', "'ls'", '"git"', 'l\\s', 'x\\\ny', '{}', 'cat']);
    const n = Math.floor(rand() * 6);
    for (let k = 0; k < n; k++) line += (rand() < 0.1 ? '' : pick(rand, [' ', '  ', '\t', ' \\\n'])) + piece(rand);
  }
  if (rand() < 0.2) line += pick(rand, [' ', ';', '\n', ' # comment', '&&', '\\']);
  const mutations = rand() < 0.7 ? 0 : Math.floor(rand() * 3);
  for (let m = 0; m < mutations; m++) {
    const at = Math.floor(rand() * (line.length + 1));
    line = line.slice(0, at) + pick(rand, SYNTAX) + line.slice(at);
  }
  return line;
}

test(`plain scan: its split equals splitShell on every plain line (seed ${SEED}, ${LINES} lines)`, () => {
  const rand = prng(SEED);
  let plain = 0;
  let withRedirections = 0;
  let multiple = 0;
  for (let i = 0; i < LINES; i++) {
    const line = i % 6 === 0 ? nearlyPlain(rand) : i % 6 === 1 ? variant(rand, 2, EXPANSION_CONTEXTS) : plainish(rand);
    const scan = scanPlain(line);
    const parse = scan.parse.plain ? scan.parse : { plain: false, why: scan.parse.why, at: scan.parse.at };
    assert.deepEqual(parse, parsePlain(line), `${JSON.stringify(line)} (seed ${SEED})`);
    if (!scan.parse.plain) {
      assert.equal(scan.split, null, JSON.stringify(line));
      continue;
    }
    plain++;
    if (scan.parse.commands.some((c) => c.redirects.length > 0)) withRedirections++;
    if (scan.parse.commands.length > 1) multiple++;
    assert.deepEqual(scan.split, splitShell(line), `${JSON.stringify(line)} (seed ${SEED})`);
  }
  // The property is only tested where lines are plain: enough of them, of every shape.
  assert.ok(plain >= LINES / 4, `only ${plain} plain lines`);
  assert.ok(withRedirections >= LINES / 20, `only ${withRedirections} plain lines with redirections`);
  assert.ok(multiple >= LINES / 10, `only ${multiple} plain lines of several commands`);
});

test('plain scan: the split keeps source form, unquoted words and redirections in place (cases a shortcut would get wrong)', () => {
  const split = (line: string) => {
    const scan = scanPlain(line);
    assert.ok(scan.split, line);
    assert.deepEqual(scan.split, splitShell(line), line);
    return scan.split.commands.map((c) => [c.text, ...c.words]);
  };
  assert.deepEqual(split(`'rm' -rf "a b" >/dev/null x`), [[`'rm' -rf "a b" >/dev/null x`, 'rm', '-rf', 'a b', '>/dev/null', 'x']]);
  assert.deepEqual(split('cmd 2>&1 | wc -l && ls >& 2'), [['cmd 2>&1', 'cmd', '2>&1'], ['wc -l', 'wc', '-l'], ['ls >&2', 'ls', '>&2']]);
  assert.deepEqual(split(`r\\\nm -rf 'a\\\nb' "c\\\nd" >"/dev/null"`), [[`rm -rf 'a\\\nb' "cd" >"/dev/null"`, 'rm', '-rf', 'a\\\nb', 'cd', '>/dev/null']]);
  assert.deepEqual(split('echo "\\$x\\`\\y"'), [['echo "\\$x\\`\\y"', 'echo', '$x`\\y']]);
  // A command's text is taken as one span of the source only while it reads as its tokens joined by single spaces.
  assert.deepEqual(split('git  log\t-1 >  /dev/null 2>& 1 x'), [['git log -1 >/dev/null 2>&1 x', 'git', 'log', '-1', '>/dev/null', '2>&1', 'x']]);
  assert.deepEqual(split('git log \\\n-1 x'), [['git log -1 x', 'git', 'log', '-1', 'x']]);
  assert.deepEqual(split('a b  c d'), [['a b c d', 'a', 'b', 'c', 'd']]);
  assert.deepEqual(split('ls x\\\ny z'), [['ls xy z', 'ls', 'xy', 'z']]);
});

test('plain scan: no split for a line that is not plain or too long (splitShell reads it)', () => {
  for (const line of ['echo $(rm -rf /)', 'a & b', 'echo > out', '( ls )', 'ls # c']) assert.equal(scanPlain(line).split, null, line);
  const long = `echo ${'a'.repeat(MAX_SHELL_LENGTH)}`;
  assert.equal(scanPlain(long).parse.plain, true);
  assert.equal(scanPlain(long).split, null);
  assert.equal(splitShell(long).ok, false);
});

test("plain scan: a refusal's reason, written on first read, names the part and stays the same", () => {
  const parse = scanPlain('ls && echo ${HOME:-/tmp} x').parse;
  assert.equal(parse.plain, false);
  assert.ok(!parse.plain);
  assert.equal(parse.at, 11);
  assert.equal(parse.why, 'parameter expansion "${HOME:-/tmp}"');
  assert.equal(parse.why, 'parameter expansion "${HOME:-/tmp}"'); // read again: the same text
  assert.deepEqual(parsePlain('ls && echo ${HOME:-/tmp} x'), { plain: false, why: parse.why, at: 11 });
  assert.deepEqual(parsePlain('a & b'), { plain: false, why: 'a background command "&"', at: 2 });
});

test(`plain scan: a command's argv whose views are taken as covered adds no view its split command lacks (seed ${SEED})`, () => {
  const rand = prng(SEED + 1);
  let covered = 0;
  for (let i = 0; i < LINES; i++) {
    const scan = scanPlain(plainish(rand));
    if (!scan.parse.plain || !scan.split) continue;
    scan.parse.commands.forEach(({ argv, redirects }, c) => {
      if (argv.length === 0 || redirects.length === 0 || !argvViewsCovered(scan.split!.commands[c]!, argv)) return;
      covered++;
      const have = new Set(strictViews(scan.split!.commands[c]!));
      for (const view of strictViews({ text: argvText(argv), words: argv, kind: 'simple' })) assert.ok(have.has(view), `${JSON.stringify(view)} of ${JSON.stringify(argv)}`);
    });
  }
  assert.ok(covered >= LINES / 40, `only ${covered} commands taken as covered`);
  // A quoted word that reads as a redirection is a word of argv: not covered.
  const quoted = scanPlain(`echo '>x' curl 2>/dev/null`);
  assert.ok(quoted.parse.plain && quoted.split);
  assert.equal(argvViewsCovered(quoted.split.commands[0]!, quoted.parse.commands[0]!.argv), false);
});
