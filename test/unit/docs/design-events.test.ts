import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { EVENT_TYPES } from '../../../src/events/types';

/** docs/design.md#events is the reference of the event union: its table names every type, and no other. */
test('design.md\'s event table names every type of the event union, and only those', () => {
  const page = readFileSync(resolve(import.meta.dirname, '../../../docs/design.md'), 'utf8');
  const section = page.slice(page.indexOf('\n## Events\n'), page.indexOf('\n## ', page.indexOf('\n## Events\n') + 1));
  const named = new Set<string>();
  for (const row of section.split('\n').filter((line) => line.startsWith('| `'))) {
    const first = row.split('|')[1]!;
    for (const match of first.matchAll(/`([a-z-]+)`/g)) named.add(match[1]!);
  }
  assert.deepEqual([...named].sort(), [...EVENT_TYPES].sort());
});
