/** The shape of test/bench/results.json (read by check.ts and scripts/perf-table.mjs). */
import { readFileSync } from 'node:fs';
import { cpus, release, totalmem, type, arch } from 'node:os';
import type { Direction } from './budgets';

export interface FigureResult {
  /** null when the benchmark could not measure it (NaN), see the notes. */
  readonly value: number | null;
  readonly unit?: string;
  readonly budget?: number;
  readonly direction?: Direction;
  readonly label?: string;
  /** Budget met; null when not judged (smoke mode, or no budget). */
  readonly pass: boolean | null;
}

export type BenchStatus = 'ok' | 'error' | 'not-implemented';

export interface BenchResult {
  readonly status: BenchStatus;
  readonly date: string;
  readonly smoke: boolean;
  readonly durationMs?: number;
  readonly error?: string;
  readonly notes: string[];
  readonly figures: Record<string, FigureResult>;
}

export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGb: number;
  readonly os: string;
  readonly arch: string;
}

export interface Results {
  readonly version: 1;
  readonly date: string;
  readonly machine: Machine;
  readonly node: string;
  readonly benchmarks: Record<string, BenchResult>;
}

export function machine(): Machine {
  let distro = '';
  try {
    distro = /^PRETTY_NAME="?([^"\n]*)"?/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? '';
  } catch { /* not Linux */ }
  const list = cpus();
  return {
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGb: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    os: `${type()} ${release()}${distro ? ` (${distro})` : ''}`,
    arch: arch(),
  };
}

export function readResults(path: string): Results | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Results;
  } catch {
    return null;
  }
}
