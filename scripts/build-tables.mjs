// What the build's dependency patches share (scripts/string-width-fast.mjs, grapheme-fast.mjs):
// editing a module's text exactly once, the one test of a character that never joins a
// neighbour into a grapheme cluster, and tables computed from ICU cached across builds.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CACHE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', '.cache', 'legion-build');

/** `from` must occur exactly once in `contents` (a dependency update must not silently undo a patch). */
export function patchOnce(contents, from, to, what) {
  const at = contents.indexOf(from);
  if (at < 0 || contents.indexOf(from, at + 1) >= 0) throw new Error(`build: cannot patch ${what}: the expected code is not there once (dependency updated?)`);
  return contents.replace(from, () => to);
}

/**
 * A test of one BMP character: true when it joins neither an ASCII letter nor itself, before
 * or after, into a grapheme cluster (so not Extend, ZWJ, SpacingMark, Prepend, a regional
 * indicator or a Hangul jamo: the only characters that form clusters with others), by ICU.
 */
export function neverJoinsTest() {
  const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  return (ch) => {
    let n = 0;
    for (const _ of segmenter.segment(`a${ch}${ch}a`)) n++;
    return n === 4;
  };
}

/**
 * `compute()`'s JSON result, cached under node_modules/.cache by `name`, the texts in `keyParts`
 * (the patching script's own text and what the table is computed from) and the Node, ICU and
 * Unicode versions. Written atomically; a cache that cannot be written is skipped.
 */
export async function cachedTable(name, keyParts, compute) {
  const hash = createHash('sha256');
  for (const part of keyParts) hash.update(part);
  const key = hash.update(`${process.version} ${process.versions.icu} ${process.versions.unicode}`).digest('hex').slice(0, 32);
  const file = join(CACHE_DIR, `${name}-${key}.json`);
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch { /* not cached yet */ }
  const table = await compute();
  try {
    mkdirSync(CACHE_DIR, { recursive: true });
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify(table));
    renameSync(temp, file);
  } catch { /* a cache is optional */ }
  return table;
}
