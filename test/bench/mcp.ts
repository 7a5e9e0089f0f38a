/**
 * mcp: what Legion adds to an MCP tool call, and what MCP servers cost the first frame.
 *
 * - `overheadMs`: median time of a call through Legion (executeTool → the MCP tool adapter →
 *   the connection → the SDK client → stdio → server-everything's `echo`) minus the median of
 *   the same call made with a bare SDK client to a second copy of the same server, calls
 *   interleaved. What is left is Legion's own share (validation, the adapter, result
 *   conversion, output capping). Budget ≤ 2 ms.
 * - `firstFrameNoMcpMs` / `firstFrameThreeMcpMs`: the built CLI in tmux to its first full
 *   frame, without and with three stdio servers configured (user config, so trusted);
 *   alternated. The servers start after the first frame, so the two should match.
 */
import { join } from 'node:path';
import { mkdirSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createMcpManager } from '../../src/mcp/manager';
import { executeTool } from '../../src/tools/execute-tool';
import { makeToolContext } from '../helpers/tool-context';
import { EVERYTHING_BIN, everythingStdio } from '../helpers/mcp-servers';
import { appEnv, hasTmux, launchTui, openTmux, prepareWorkspace, screenSummary, stats, type BenchOptions } from './harness';
import { exited } from './harness';

export async function run({ smoke, note }: BenchOptions): Promise<Record<string, number>> {
  const calls = await callOverhead(smoke ? 20 : 400);
  const frames = hasTmux() ? await firstFrames(smoke ? 1 : 8) : (note?.('tmux is not installed: first frame not measured'), { none: NaN, three: NaN });
  return { ...calls, firstFrameNoMcpMs: frames.none, firstFrameThreeMcpMs: frames.three };
}

async function callOverhead(count: number): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'legion-bench-mcp-'));
  const manager = createMcpManager({
    servers: [everythingStdio()], untrusted: new Set(), verify: async () => null, legionDir: join(dir, '.legion'), clientVersion: 'bench',
    reservedNames: new Set(), emit: () => undefined, secrets: [], canAskUser: false,
  });
  const bare = new Client({ name: 'bench', version: '0' });
  try {
    manager.start();
    await manager.settled();
    await bare.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING_BIN, 'stdio'], stderr: 'ignore' }));
    await bare.listTools();
    const echo = manager.tools().find((t) => t.name === 'mcp__everything__echo');
    if (!echo) throw new Error('server-everything has no echo tool');
    const context = makeToolContext(dir);
    const legion: number[] = [];
    const sdk: number[] = [];
    for (let i = 0; i < count + 20; i++) {
      const message = `bench ${i}`;
      let t = performance.now();
      const result = await executeTool(echo, { message }, context);
      const a = performance.now() - t;
      if (result.content !== `Echo: ${message}`) throw new Error(`unexpected result ${result.content}`);
      t = performance.now();
      await bare.callTool({ name: 'echo', arguments: { message } });
      const b = performance.now() - t;
      if (i >= 20) { legion.push(a); sdk.push(b); }
    }
    const l = stats(legion);
    const s = stats(sdk);
    return { legionCallMs: l.median, sdkCallMs: s.median, overheadMs: Math.max(0, l.median - s.median), legionCallP95Ms: l.p95 };
  } finally {
    await bare.close().catch(() => undefined);
    await manager.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function firstFrames(count: number): Promise<{ none: number; three: number }> {
  const ws = prepareWorkspace();
  const home = mkdtempSync(join(tmpdir(), 'legion-bench-home-'));
  const config = join(home, '.config', 'legion');
  mkdirSync(config, { recursive: true });
  const servers = ['one', 'two', 'three'].map((name) => `  ${name}:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(EVERYTHING_BIN)}, stdio]\n`).join('');
  const withServers = join(home, 'with.yaml');
  writeFileSync(withServers, `mcpServers:\n${servers}`);
  const env = { ...appEnv(), HOME: home, XDG_CONFIG_HOME: join(home, '.config') };
  const pane = openTmux({ width: 120, height: 40, env, cwd: ws.dir });
  const none: number[] = [];
  const three: number[] = [];
  let pid: number | null = null;
  try {
    for (let i = 0; i < count + 1; i++) {
      for (const mode of ['none', 'three'] as const) {
        if (mode === 'three') writeFileSync(join(config, 'config.yaml'), `mcpServers:\n${servers}`);
        else rmSync(join(config, 'config.yaml'), { force: true });
        const r = await launchTui(pane, { timeoutMs: 5_000 });
        if (!r.ok) throw new Error(`TUI did not start (${mode}): ${r.reason}; screen: ${screenSummary(r.screen)}`);
        pid = r.pid;
        if (i > 0) (mode === 'none' ? none : three).push(r.ms);
      }
    }
  } finally {
    pane.close();
    await exited(pid);
    ws.cleanup();
    rmSync(home, { recursive: true, force: true });
  }
  return { none: stats(none).median, three: stats(three).median };
}
