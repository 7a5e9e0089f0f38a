import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { anchorsOf, headingSlug, relativeLinks } from '../../helpers/markdown';

/**
 * The front page stays a front page, the reference lives in docs/, every link between them
 * resolves (page and anchor), and the code cites the project's own docs pages: no citation
 * of a design document outside the repository.
 */
const ROOT = resolve(import.meta.dirname, '../../..');
const SOURCE_DIRS = ['src', 'components', 'test', 'docs', 'config', 'scripts', 'bin', '.ci'];
const SKIP = new Set(['node_modules', 'dist', '.git', 'fixtures']);

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    if (SKIP.has(name)) return [];
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

const markdownPages = [join(ROOT, 'README.md'), ...walk(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'))];
const anchorCache = new Map<string, Set<string>>();
function anchors(page: string): Set<string> {
  let found = anchorCache.get(page);
  if (!found) anchorCache.set(page, (found = anchorsOf(readFileSync(page, 'utf8'))));
  return found;
}

/** Why a link from `page` to `target` does not resolve, or null when it does. */
function brokenLink(page: string, target: string): string | null {
  const [path = '', anchor] = target.split('#');
  const file = path === '' ? page : resolve(dirname(page), decodeURIComponent(path));
  if (!existsSync(file)) return `no file ${relative(ROOT, file)}`;
  if (anchor === undefined || anchor === '') return null;
  if (!file.endsWith('.md')) return `anchor #${anchor} on a file that is not markdown`;
  return anchors(file).has(anchor) ? null : `no heading #${anchor} in ${relative(ROOT, file)}`;
}

test('README.md is a front page of at most 300 lines', () => {
  const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length;
  assert.ok(lines <= 300, `README.md has ${lines} lines; move the detail into a docs/ page`);
  assert.match(readFileSync(join(ROOT, 'README.md'), 'utf8'), /npm test/, 'the README names the test command');
});

test('every docs page is listed in the index docs/README.md', () => {
  const index = readFileSync(join(ROOT, 'docs/README.md'), 'utf8');
  const listed = new Set(relativeLinks(index).map((l) => l.target.split('#')[0]));
  const unlisted = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md') && f !== 'README.md' && !listed.has(f));
  assert.deepEqual(unlisted, [], 'add one line per page to docs/README.md');
});

test('every relative link of README.md and docs/ resolves, anchors included', () => {
  const broken: string[] = [];
  for (const page of markdownPages) {
    for (const { line, target } of relativeLinks(readFileSync(page, 'utf8'))) {
      const why = brokenLink(page, target);
      if (why) broken.push(`${relative(ROOT, page)}:${line}: (${target}) ${why}`);
    }
  }
  assert.deepEqual(broken, []);
});

test('citations of a docs section in the code resolve (docs/<page>.md#<anchor>)', () => {
  const broken: string[] = [];
  const files = SOURCE_DIRS.flatMap((d) => walk(join(ROOT, d))).filter((f) => /\.(ts|tsx|mjs|js|yaml|md)$/.test(f));
  for (const file of files) {
    readFileSync(file, 'utf8').split('\n').forEach((text, i) => {
      for (const m of text.matchAll(/\bdocs\/([\w-]+\.md)(#[\w-]+)/g)) {
        const why = brokenLink(join(ROOT, 'docs', 'README.md'), `${m[1]}${m[2]}`);
        if (why) broken.push(`${relative(ROOT, file)}:${i + 1}: ${m[0]}: ${why}`);
      }
    });
  }
  assert.deepEqual(broken, []);
});

test('no file cites the design document that is not in the repository', () => {
  const word = new RegExp(['DES', 'IGN'].join(''));
  const files = [join(ROOT, 'README.md'), join(ROOT, 'package.json'), ...SOURCE_DIRS.flatMap((d) => walk(join(ROOT, d)))];
  const citing: string[] = [];
  for (const file of files) {
    readFileSync(file, 'utf8').split('\n').forEach((text, i) => {
      if (word.test(text)) citing.push(`${relative(ROOT, file)}:${i + 1}: ${text.trim()}`);
    });
  }
  assert.deepEqual(citing, [], 'cite the docs/ page instead (docs/design.md#<section>)');
});

test('markdown helpers: GitHub anchors, fenced code skipped', () => {
  assert.equal(headingSlug('`legion init` and the `.legion/` folder'), 'legion-init-and-the-legion-folder');
  assert.equal(headingSlug('After a restart: pending requests come back'), 'after-a-restart-pending-requests-come-back');
  const page = '# Title\n\n## Keys\n\n```\n# not a heading [x](nowhere.md)\n```\n## Keys\n[a](b.md#keys) `[c](d.md)` [e](https://x.y)\n';
  assert.deepEqual([...anchorsOf(page)], ['title', 'keys', 'keys-1']);
  assert.deepEqual(relativeLinks(page), [{ line: 9, target: 'b.md#keys' }]);
});
