// The code cache of Node's built-in modules in a start-up snapshot blob, and dropping the part
// of it no start can use (docs/performance.md#the-start-up-snapshot). Used by scripts/snapshot.mjs.
//
// Node 20 writes a snapshot blob as: its metadata, V8's startup data, the isolate's and the
// environment's serialize info, then the code cache of every built-in module it compiled while
// building (src/node_snapshotable.cc, `SnapshotData::ToBlob`): a count (size_t), then per module
// its id (size_t length + bytes) and its cache (size_t length + bytes), to the end of the file.
// A start reads the whole file and copies each cache into memory of its own; a module is
// compiled with its cache only when it is first loaded, and the modules the snapshot's heap
// already holds (loaded while it built) are never compiled again in that process, so their
// caches (~2 MB of ~3 MB here) are read and copied at every start for nothing. Only those are
// dropped: a module loaded later (node:http at the first model call…) keeps its cache, and a
// built-in compiled without one is compiled eagerly, a path this file never adds.
import { spawnSync } from 'node:child_process';
import { writeFileSync, rmSync } from 'node:fs';

const MAGIC = 0x0143da19;

/** The byte offset of the code cache's count in `blob` and its entries; throws when the blob is not laid out as Node 20 writes it. */
export function codeCacheOf(blob) {
  if (blob.length < 64 || blob.readUInt32LE(0) !== MAGIC) throw new Error('not a Node snapshot blob (magic)');
  // Metadata: type (1 byte), node version, arch, platform (size_t length + bytes each), V8's cache tag (4), flags (4).
  let p = 5;
  for (let i = 0; i < 3; i++) p += 8 + Number(blob.readBigUInt64LE(p));
  p += 8;
  const v8Size = blob.readInt32LE(p);
  p += 4 + v8Size;
  if (v8Size <= 0 || p >= blob.length) throw new Error('not a Node snapshot blob (V8 startup data)');
  // The serialize info between V8's data and the code cache has no length of its own: the code
  // cache is the one offset from which `count` entries end exactly at the end of the file.
  for (let start = p; start + 8 <= blob.length; start++) {
    const entries = entriesFrom(blob, start);
    if (entries) return { offset: start, entries };
  }
  throw new Error('no code cache at the end of the snapshot blob');
}

function entriesFrom(blob, start) {
  const count = Number(blob.readBigUInt64LE(start));
  if (count < 1 || count > 5000) return null;
  const entries = [];
  let q = start + 8;
  for (let i = 0; i < count; i++) {
    if (q + 8 > blob.length) return null;
    const idLength = Number(blob.readBigUInt64LE(q));
    if (idLength < 1 || idLength > 256 || q + 8 + idLength + 8 > blob.length) return null;
    const id = blob.toString('latin1', q + 8, q + 8 + idLength);
    if (!/^[A-Za-z0-9_@./-]+$/.test(id)) return null;
    const dataAt = q + 8 + idLength;
    const dataLength = Number(blob.readBigUInt64LE(dataAt));
    const end = dataAt + 8 + dataLength;
    if (end > blob.length) return null;
    entries.push({ id, from: q, to: end });
    q = end;
  }
  return q === blob.length ? entries : null;
}

/** `blob` without the code cache of the modules `loaded` names (their ids); the rest byte for byte. */
export function withoutCodeCacheOf(blob, loaded) {
  const { offset, entries } = codeCacheOf(blob);
  const kept = entries.filter((e) => !loaded.has(e.id));
  const count = Buffer.alloc(8);
  count.writeBigUInt64LE(BigInt(kept.length));
  return { blob: Buffer.concat([blob.subarray(0, offset), count, ...kept.map((e) => blob.subarray(e.from, e.to))]), dropped: entries.length - kept.length };
}

/**
 * The built-in modules the heap of `blob` holds: what a start from it lists in
 * `process.moduleLoadList` before any JavaScript of its own runs (a preload reads it).
 */
export function builtinsInSnapshot({ node, flags, blob, temp }) {
  const preload = `${temp}.builtins.cjs`;
  writeFileSync(preload, "require('fs').writeSync(1, 'builtins-in-snapshot: ' + JSON.stringify(process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13))) + '\\n');\n");
  try {
    const r = spawnSync(node, [...flags, '--snapshot-blob', blob, '--require', preload, '--', '--version'], { cwd: '/', env: {}, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    const listed = /^builtins-in-snapshot: (\[.*\])$/m.exec(r.stdout ?? '');
    if (r.status !== 0) throw new Error(`build: a start from the new start-up snapshot failed (${r.error?.message ?? `exit ${r.status ?? r.signal}`}): ${`${r.stdout}${r.stderr}`.trim().slice(0, 2000)}`);
    if (!listed) throw new Error(`build: a start from the new start-up snapshot did not list its built-ins: ${`${r.stdout}${r.stderr}`.trim().slice(0, 2000)}`);
    return new Set(JSON.parse(listed[1]));
  } finally {
    rmSync(preload, { force: true });
  }
}
