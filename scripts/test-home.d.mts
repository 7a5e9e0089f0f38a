// Types of scripts/test-home.mjs (a plain script: scripts/test.mjs runs it without tsx).
export interface TestHome {
  readonly root: string;
  readonly home: string;
  readonly realHome: string;
  readonly env: NodeJS.ProcessEnv;
  readonly markers: readonly string[];
  cleanup(): void;
}
export interface Stamp {
  readonly stamp: string;
  readonly text: string;
}
export function makeTestHome(baseEnv?: NodeJS.ProcessEnv): TestHome;
export function watchedPlaces(realEnv?: NodeJS.ProcessEnv): string[];
export function stampPlaces(places: readonly string[]): Map<string, Stamp>;
export function changesBetween(before: ReadonlyMap<string, Stamp>, after: ReadonlyMap<string, Stamp>, markers: readonly string[]): { leaked: string[]; meanwhile: string[] };
export function verdictOnPlaces(before: ReadonlyMap<string, Stamp>, places: readonly string[], home: Pick<TestHome, 'markers'>, env?: NodeJS.ProcessEnv): { fail: boolean; lines: string[] };
export function swcCacheDir(): string | null;
export interface Supervisor {
  run(command: string, args: string[], options?: { cwd?: string; env?: NodeJS.ProcessEnv; timeout?: number }): Promise<number>;
  finish(): void;
}
export function superviseRun(home: Pick<TestHome, 'root' | 'home' | 'cleanup'>, options?: { env?: NodeJS.ProcessEnv; log?: (line: string) => void; exit?: (code: number) => void }): Supervisor;
export function adoptTestHome(proc?: NodeJS.Process): TestHome | null;
