import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COARSE_RECENT_MS, ENTRY_FOLDER, ENTRY_LINK, ENTRY_OTHER, FolderListings, RECENT_MS, type EntryKind, type FolderStats, type ListingSystem } from '../../../../src/authz/dir-listings';

/**
 * FolderListings trusts a remembered listing only while the folder's (device, inode, ctime) is
 * the one it was read with, and reads one only of a folder unchanged for RECENT_MS (a change in
 * the same clock tick would keep its ctime). A fake filesystem whose ctime the test sets: the
 * listing must never answer for a folder that changed since it was read. A folder is read at
 * the second lookup that finds it unchanged (`entries` twice below).
 */
const EXT4 = 0xef53;
const NFS = 0x6969;

class FakeFolder {
  entries = new Map<string, EntryKind>([['a.ts', ENTRY_OTHER]]);
  ino = 7;
  ctimeMs = 1_000_000.25;
  type = EXT4;
}

function fake(folder: FakeFolder, clock: { now: number }) {
  const reads: string[] = [];
  const stats = (): FolderStats => ({ dev: 1, ino: folder.ino, ctimeMs: folder.ctimeMs, isDirectory: () => true, isSymbolicLink: () => false });
  const system: ListingSystem = {
    lstat: () => stats(),
    list: (path, max) => (reads.push(path), folder.entries.size > max ? null : new Map(folder.entries)),
    filesystem: () => folder.type,
    now: () => clock.now,
  };
  return { system, reads, stats };
}

test('a folder changed within RECENT_MS is not listed; once older it is, and the listing is kept while its ctime and inode hold', () => {
  const folder = new FakeFolder();
  const clock = { now: folder.ctimeMs + RECENT_MS / 2 };
  const { system, reads, stats } = fake(folder, clock);
  const listings = new FolderListings(system);
  listings.entries('/w', stats());
  assert.equal(listings.entries('/w', stats()), null, 'changed too lately: a change in the same tick would go unseen');
  assert.deepEqual(reads, []);
  assert.equal(listings.mayList('/w'), false, 'not tried again before the folder is old enough');
  clock.now = folder.ctimeMs + RECENT_MS + 1;
  assert.equal(listings.mayList('/w'), true);
  assert.equal(listings.entries('/w', stats()), null, 'seen once: read only if the next lookup finds it the same');
  assert.deepEqual(reads, []);
  assert.equal(listings.entries('/w', stats())?.get('a.ts'), ENTRY_OTHER);
  assert.equal(listings.entries('/w', stats())?.get('a.ts'), ENTRY_OTHER);
  assert.deepEqual(reads, ['/w'], 'read once, then remembered');
  // A folder changed between every two lookups (an agent writing in it) is never read.
  for (let i = 0; i < 5; i++) {
    clock.now += 10 * RECENT_MS;
    folder.ctimeMs = clock.now - 5 * RECENT_MS;
    assert.equal(listings.entries('/w', stats()), null);
  }
  assert.deepEqual(reads, ['/w']);
});

test('a changed ctime or inode is never answered from the listing: a file swapped for a link is seen at once', () => {
  const folder = new FakeFolder();
  const clock = { now: folder.ctimeMs + 10 * RECENT_MS };
  const { system, reads, stats } = fake(folder, clock);
  const listings = new FolderListings(system);
  listings.entries('/w', stats());
  assert.equal(listings.entries('/w', stats())?.get('a.ts'), ENTRY_OTHER);
  // The swap: the kernel stamps the folder's ctime with its clock (now), later than the listing's.
  folder.entries.set('a.ts', ENTRY_LINK);
  folder.ctimeMs = clock.now;
  assert.equal(listings.entries('/w', stats()), null, 'changed: the old listing is not used');
  assert.equal(listings.entries('/w', stats()), null, 'changed just now: not read yet');
  clock.now += RECENT_MS + 1;
  assert.equal(listings.entries('/w', stats()), null);
  assert.equal(listings.entries('/w', stats())?.get('a.ts'), ENTRY_LINK);
  // Another folder in its place (same ctime, new inode): not answered from the old listing.
  folder.ino = 8;
  folder.entries.set('b', ENTRY_FOLDER);
  assert.equal(listings.entries('/w', stats()), null);
  assert.equal(listings.entries('/w', stats())?.get('b'), ENTRY_FOLDER);
  assert.deepEqual(reads, ['/w', '/w', '/w']);
});

test('a ctime in whole seconds (coarse timestamps) waits COARSE_RECENT_MS; a network filesystem, a folder changed while read or too large is not listed', () => {
  const folder = new FakeFolder();
  folder.ctimeMs = 2_000_000;
  const clock = { now: folder.ctimeMs + RECENT_MS * 2 };
  const { system, reads, stats } = fake(folder, clock);
  const twice = (listings: FolderListings, s = stats()) => (listings.entries('/w', s), listings.entries('/w', s));
  assert.equal(twice(new FolderListings(system)), null);
  clock.now = folder.ctimeMs + COARSE_RECENT_MS + 1;
  assert.notEqual(twice(new FolderListings(system)), null);

  folder.type = NFS;
  assert.equal(twice(new FolderListings(system)), null, 'ctimes stamped by another clock');
  folder.type = EXT4;

  // Changed between the lstat that validated it and the read.
  const racing: ListingSystem = { ...system, lstat: () => ({ ...stats(), ctimeMs: folder.ctimeMs + 1 }) };
  assert.equal(twice(new FolderListings(racing)), null);

  for (let i = 0; i < 20_000; i++) folder.entries.set(`f${i}`, ENTRY_OTHER);
  reads.length = 0;
  const big = new FolderListings(system);
  assert.equal(twice(big), null);
  assert.equal(big.mayList('/w'), false, 'not read again at once');
  assert.equal(reads.length, 1);
});

test('a link or a file given as the folder is never listed', () => {
  const folder = new FakeFolder();
  const { system, reads } = fake(folder, { now: folder.ctimeMs + 10 * RECENT_MS });
  const listings = new FolderListings(system);
  const base = { dev: 1, ino: 7, ctimeMs: folder.ctimeMs };
  assert.equal(listings.entries('/w', { ...base, isDirectory: () => false, isSymbolicLink: () => true }), null);
  assert.equal(listings.entries('/w', { ...base, isDirectory: () => false, isSymbolicLink: () => false }), null);
  assert.deepEqual(reads, []);
});
