/**
 * The paced vendor replay server (test/helpers/stream-replay.ts) in a process of its own, so
 * the benchmark's CPU figures hold only Legion's work. argv[2]: the ReplaySpec as JSON. Prints
 * `{"port":N}` once listening; exits when stdin closes.
 */
import { startReplayServer, type ReplaySpec } from '../helpers/stream-replay';

const spec = JSON.parse(process.argv[2] ?? '{}') as ReplaySpec;
const server = await startReplayServer(spec);
process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
process.stdin.resume();
process.stdin.on('end', () => void server.close().then(() => process.exit(0)));
