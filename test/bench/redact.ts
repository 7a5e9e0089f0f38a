/**
 * redact: the secret redaction of tool inputs (src/authz/redact.ts) on 1 MB adversarial inputs
 * (test/helpers/redact-adversarial.ts: long runs of key characters, keyword repeats, token
 * prefixes without a valid end, unclosed quotes). It runs synchronously on every tool input,
 * so a slow pattern freezes the TUI and every agent (the quadratic key/value pattern it
 * replaced took ~2 s for 40 kB and ~10 s for 80 kB).
 * Figures: worst1MbMs (the budget: the slowest input, median of 5 runs), worst1MbCpuMs (the same
 * in CPU time, which a loaded machine disturbs less), typical1MbMs (1 MB of ordinary text).
 */
import { performance } from 'node:perf_hooks';
import { redact } from '../../src/authz/redact';
import { ADVERSARIAL_INPUTS } from '../helpers/redact-adversarial';
import { gc, stats, type BenchOptions } from './harness';

export async function run({ smoke, note }: BenchOptions): Promise<Record<string, number>> {
  const size = smoke ? 64 * 1024 : 1 << 20;
  const inputs = Object.entries(ADVERSARIAL_INPUTS).map(([name, text]) => [name, text.slice(0, size)] as const);
  const ordinary = 'const total = items.reduce((sum, item) => sum + item.price * item.count, 0); // see README\n'.repeat(size / 80).slice(0, size);
  const measure = (text: string): { wall: number; cpu: number } => {
    const walls: number[] = [];
    const cpus: number[] = [];
    for (let i = 0; i < 6; i++) {
      gc();
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      redact(text);
      const wall = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      if (i > 0) {
        walls.push(wall);
        cpus.push((cpu.user + cpu.system) / 1000);
      }
    }
    return { wall: stats(walls).median, cpu: stats(cpus).median };
  };
  let worst = { name: '', wall: 0, cpu: 0 };
  for (const [name, text] of inputs) {
    const m = measure(text);
    if (m.wall > worst.wall) worst = { name, ...m };
  }
  note?.(`slowest input: ${worst.name}`);
  return { worst1MbMs: worst.wall, worst1MbCpuMs: worst.cpu, typical1MbMs: measure(ordinary).wall };
}
