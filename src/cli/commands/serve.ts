import { setTimeout as delay } from 'node:timers/promises';
import { spawn } from 'node:child_process';
import { mkdirSync, openSync, closeSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Command } from '../command';
import { LegionError } from '../../errors';
import { layoutFor } from '../../storage/layout';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../../storage/private-mode';
import { locateServer, probeSocket } from '../../serve/locate';
import { SERVE_ADDONS } from '../serve-addons';

const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** `legion serve [--detach]`: hold the workspace's core in a long-lived process (docs/serve.md). */
export const serveCommand: Command = {
  name: 'serve',
  usage: 'legion serve [--detach] [--new | --run <id>]',
  summary: 'keep the agents working without a terminal: a server front ends attach to (stop it with legion stop)',
  flags: { detach: 'boolean', new: 'boolean', run: 'value', ...Object.assign({}, ...SERVE_ADDONS.map((a) => a.flags ?? {})) },
  async run(context) {
    const { args, io } = context;
    if (args.positionals.length > 0) throw new LegionError(`legion serve takes no arguments (got "${args.positionals[0]}")`, 2);
    if (args.flags.get('detach') === true) return detach(context);
    const stamp = (): string => new Date().toISOString().slice(0, 19).replace('T', ' ');
    const log = (line: string): void => io.stderr(`${stamp()} legion serve: ${line}\n`);
    let stop: (reason: string) => void = () => undefined;
    const until = new Promise<string>((resolve) => { stop = resolve; });
    const handlers = STOP_SIGNALS.map((signal) => {
      const handler = (): void => stop(signal === 'SIGTERM' ? 'legion stop (SIGTERM)' : signal);
      process.on(signal, handler);
      return () => void process.off(signal, handler);
    });
    try {
      const { hostServer } = await import('../serve-host');
      return await hostServer(context, { until, addons: SERVE_ADDONS, log });
    } finally {
      for (const off of handlers) off();
    }
  },
};

/**
 * `--detach`: start `legion serve` again as a process of its own session (no terminal), its
 * output appended to `.legion/logs/serve.log`; wait until it listens (or fails), then return.
 */
async function detach(context: Parameters<Command['run']>[0]): Promise<number> {
  const { io, args } = context;
  const layout = layoutFor(context.workspaceRoot);
  const { refuseSecondServer } = await import('../serve-host');
  const recovered = await refuseSecondServer(layout.legionDir);
  if (recovered) io.stderr(`legion: ${recovered}\n`);
  const logDir = join(layout.legionDir, 'logs');
  mkdirSync(logDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const logFile = join(logDir, 'serve.log');
  const fd = openSync(logFile, 'a', PRIVATE_FILE_MODE);
  let logStart = 0;
  try { logStart = readFileSync(logFile).length; } catch { /* new */ }
  const argv = [...process.execArgv, process.argv[1]!, 'serve', '--cwd', context.workspaceRoot];
  if (args.flags.get('new') === true) argv.push('--new');
  const runFlag = args.flags.get('run');
  if (typeof runFlag === 'string') argv.push('--run', runFlag);
  for (const [name, value] of args.flags) {
    if (name === 'detach' || name === 'new' || name === 'run') continue;
    argv.push(`--${name}`, ...(value === true ? [] : [value]));
  }
  if (args.global.provider) argv.push('--provider', args.global.provider);
  if (args.global.model) argv.push('--model', args.global.model);
  const child = spawn(process.execPath, argv, { detached: true, stdio: ['ignore', fd, fd], env: { ...io.env } as NodeJS.ProcessEnv });
  closeSync(fd);
  let exited: number | null | undefined;
  child.on('exit', (code) => { exited = code; });
  child.unref();
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (exited !== undefined) {
      const tail = readFileSync(logFile, 'utf8').slice(logStart).trim().split('\n').filter(Boolean).pop() ?? '';
      throw new LegionError(`the server did not start (exit ${exited}): ${tail.replace(/^.*?legion(?: serve)?: /, '')} (see ${logFile})`);
    }
    const located = await locateServer(layout.legionDir, { hostname: hostname() });
    if (located.kind === 'running' && located.info.pid === child.pid) {
      if (await probeSocket(located.info.socket)) {
        io.stdout(`legion: serving run ${located.info.runId} (pid ${child.pid}); log: ${logFile}; stop with \`legion stop\`\n`);
        return 0;
      }
    }
    await delay(100);
  }
  throw new LegionError(`the server did not answer within 60 s (see ${logFile})`);
}
