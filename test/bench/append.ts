/**
 * append: the cost of appending one message to a session JSONL file does not grow with
 * the session (docs/design.md#files-on-disk). Appends a realistic message with `appendJsonl` to a file with
 * 10 prior lines and to one with 10,000, interleaved so machine noise hits both alike;
 * each file is truncated back to its prior length after every append (untimed).
 * Budget: median at 10,000 ≤ 1.5 × median at 10.
 */
import { mkdtempSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { appendJsonl } from '../../src/storage/jsonl';
import type { Message } from '../../src/model/message';
import { gc, stats, type BenchOptions } from './harness';

function message(i: number): Message {
  const role = i % 2 ? 'assistant' : 'user';
  return {
    role,
    at: new Date(1_700_000_000_000 + i * 1000).toISOString(),
    content: i % 3 === 0
      ? [{ type: 'text', text: `Step ${i}: reading the files the user named. `.repeat(6) }, { type: 'tool_use', id: `tu_${i}`, name: 'file_read', input: { path: `src/file-${i}.ts` } }]
      : [{ type: 'text', text: `Message ${i}: here is what I found in the module and what I propose to change next. `.repeat(4) }],
  };
}

function sessionFile(dir: string, lines: number): string {
  const path = join(dir, `session-${lines}.jsonl`);
  let text = '';
  for (let i = 0; i < lines; i++) text += JSON.stringify(message(i)) + '\n';
  writeFileSync(path, text);
  return path;
}

export async function run({ smoke }: BenchOptions): Promise<Record<string, number>> {
  const small = 10;
  const large = smoke ? 200 : 10_000;
  const warmup = smoke ? 20 : 500;
  const count = smoke ? 50 : 5_000;
  const dir = mkdtempSync(join(tmpdir(), 'legion-bench-append-'));
  try {
    const files = [small, large].map((n) => {
      const path = sessionFile(dir, n);
      return { path, size: statSync(path).size, samples: [] as number[] };
    });
    const next = message(10_001);
    gc();
    for (let i = 0; i < warmup + count; i++) {
      // Alternate which file goes first so neither always follows the other.
      const order = i % 2 ? [files[1]!, files[0]!] : [files[0]!, files[1]!];
      for (const f of order) {
        const t0 = performance.now();
        appendJsonl(f.path, next);
        const dt = performance.now() - t0;
        truncateSync(f.path, f.size);
        if (i >= warmup) f.samples.push(dt * 1000);
      }
    }
    const at10 = stats(files[0]!.samples);
    const at10k = stats(files[1]!.samples);
    return {
      ratio10kTo10: at10k.median / at10.median,
      at10Micros: at10.median,
      at10kMicros: at10k.median,
      at10kP95Micros: at10k.p95,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
