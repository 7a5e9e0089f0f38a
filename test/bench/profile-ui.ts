/**
 * The UI's CPU per streamed frame in process (a helper for docs/streaming.md, not a benchmark):
 * the real App (production React, Ink's renderer on fake TTY streams, 200×50) on a fake core,
 * one lane streaming the bench's text as one-character deltas, `perFrame` of them between
 * frames; CPU of the process per frame over `frames` frames, after a warm-up of as many.
 * Usage: node --import tsx test/bench/profile-ui.ts [frames=100] [perFrame=30] [out.cpuprofile]
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

process.env.NODE_ENV = 'production';
delete process.env.CI;
const { mountBenchApp } = await import('../helpers/tui-bench');
const { createFakeCore, open, sessionIdOf, status, userMessage } = await import('../helpers/fake-core');
const { replayText } = await import('../helpers/stream-replay');

const frames = Number(process.argv[2] ?? 100);
const perFrame = Number(process.argv[3] ?? 30);
const out = process.argv[4];
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const text = replayText(frames * perFrame * 2);

const core = createFakeCore();
const id = sessionIdOf('user', 'ur-agent');
core.emit(open('user', 'ur-agent'));
const app = mountBenchApp(core, { columns: 200, rows: 50, maxLanes: 4 });
core.emit(userMessage(id, 'Please write a long answer.'));
core.emit(status(id, 'ur-agent', 'thinking'));
await sleep(200);
let at = 0;
const pass = async (): Promise<{ cpuMs: number; frames: number }> => {
  const f0 = app.frames.count;
  const cpu0 = process.cpuUsage();
  for (let f = 0; f < frames; f++) {
    for (let i = 0; i < perFrame; i++) core.emit({ type: 'text-delta', sessionId: id, participantId: 'ur-agent', text: text[at++]! });
    await sleep(34);
  }
  const cpu = process.cpuUsage(cpu0);
  return { cpuMs: (cpu.user + cpu.system) / 1000, frames: app.frames.count - f0 };
};
await pass();
const session = out ? new Session() : undefined;
if (session) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: Number(process.env.PROFILE_INTERVAL ?? 200) });
  await session.post('Profiler.start');
}
const r = await pass();
if (session) writeFileSync(out!, JSON.stringify((await session.post('Profiler.stop')).profile));
process.stdout.write(`${(r.cpuMs / r.frames).toFixed(3)} ms CPU per frame (${r.frames} frames, ${perFrame} deltas each)\n`);
app.unmount();
process.exit(0);
