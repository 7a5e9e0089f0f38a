import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { engineConfig, restateServerBinary } from '../../../src/engine/local-engine';
import { ensureSigningKey } from '../../../src/engine/identity';
import { withTempDir } from '../../helpers/tmp';

const binary = restateServerBinary();

/** The config as restate-server reads it (`--dump-config`: its defaults with ours applied). */
function effective(dir: string, settings: readonly string[] = []): string {
  if (!binary.ok) throw new Error(binary.error);
  const file = join(dir, 'restate.toml');
  ensureSigningKey(join(dir, 'key.pem'));
  writeFileSync(file, engineConfig({ dataDir: join(dir, 'data'), signingKeyFile: join(dir, 'key.pem'), settings }));
  const dumped = spawnSync(binary.path, ['--config-file', file, '--dump-config'], { encoding: 'utf8' });
  assert.equal(dumped.status, 0, dumped.stderr);
  return dumped.stdout;
}

/** The value of `key` in the TOML table `table` ('' = top level) of a dumped config. */
function valueOf(dumped: string, table: string, key: string): string | undefined {
  let current = '';
  for (const line of dumped.split('\n')) {
    const header = /^\[([^\]]+)\]$/.exec(line.trim());
    if (header) current = header[1]!;
    else if (current === table && line.startsWith(`${key} = `)) return line.slice(key.length + 3);
  }
  return undefined;
}

test('the local engine keeps every acknowledged journal entry fsynced: a latency setting never trades durability', { skip: !binary.ok && 'restate-server is not installed here' }, async () => {
  await withTempDir(async (dir) => {
    const dumped = effective(dir);
    assert.equal(valueOf(dumped, 'bifrost', 'default-provider'), '"local"');
    // The local loglet writes the log through RocksDB's WAL: fsynced, not disabled.
    assert.equal(valueOf(dumped, 'bifrost.local', 'rocksdb-disable-wal'), 'false');
    assert.equal(valueOf(dumped, 'bifrost.local', 'rocksdb-disable-wal-fsync'), 'false');
    assert.equal(valueOf(dumped, 'log-server', 'rocksdb-disable-wal-fsync'), 'false');
    assert.equal(valueOf(dumped, '', 'default-num-partitions'), '1');
    assert.equal(valueOf(dumped, '', 'disable-telemetry'), 'true', 'a local engine phones no one');
    assert.equal(valueOf(dumped, 'worker.invoker', 'request-identity-private-key-pem-file'), JSON.stringify(join(dir, 'key.pem')), 'every request to a worker is signed');
  });
});

test('settings added to the config reach the engine as dotted keys of any table', { skip: !binary.ok && 'restate-server is not installed here' }, async () => {
  await withTempDir(async (dir) => {
    const dumped = effective(dir, ['worker.invoker.concurrent-invocations-limit = 7', 'default-thread-pool-size = 2']);
    assert.equal(valueOf(dumped, 'worker.invoker', 'concurrent-invocations-limit'), '7');
    assert.equal(valueOf(dumped, '', 'default-thread-pool-size'), '2');
    // The fixed keys are unchanged by them.
    assert.equal(valueOf(dumped, '', 'default-num-partitions'), '1');
  });
});
