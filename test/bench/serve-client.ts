/**
 * One attached front end for the serve benchmark (test/bench/serve.ts), bundled and started
 * 20 times: attaches a remote core (the TUI's path: socket, zod, mirror, relay bus), records how
 * far behind the server each text delta arrives (now − the event's `at`), and when stdin closes
 * prints `{ "deltas", "maxBehindMs", "p99BehindMs" }`.
 */
import { attachRemote } from '../../src/serve/remote-core';

const socket = process.argv[2]!;
const core = (await attachRemote({ socket, client: 'bench' })).core;
const lags: number[] = [];
core.bus.subscribe('text-delta', (event) => void lags.push(Date.now() - Date.parse(event.at)));
process.stdout.write('ready\n');
process.stdin.resume();
process.stdin.on('end', () => {
  const sorted = [...lags].sort((a, b) => a - b);
  const p99 = sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]! : NaN;
  process.stdout.write(JSON.stringify({ deltas: lags.length, maxBehindMs: sorted.at(-1) ?? NaN, p99BehindMs: p99 }) + '\n');
  void core.shutdown('bench').then(() => process.exit(0));
});
