import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpTransportSpec } from './servers';
import { mkdirSync } from 'node:fs';
import { hostArgs, hostCommand, hostPath } from '../tools/host-path';

/**
 * The SDK transport for one server; throws when a bare command must not be looked for in the
 * workspace and is nowhere else. stdio: the command runs without a shell, in `cwd`, with
 * the SDK's short list of inherited variables (PATH, HOME, USER, SHELL, TERM, LOGNAME) plus
 * the entry's `env` — API keys of Legion's environment are not passed on; stderr goes to
 * `onStderr`. A server of the user's own config (`outsideOf`) gets PATH without the workspace's
 * folders (hostPath) unless its `env` sets PATH: `npx` is `#!/usr/bin/env node`, and a `node`
 * planted in an activated `.venv/bin` would otherwise run it, as the user, unsandboxed.
 * http: streamable HTTP with the entry's headers on every request.
 */
export function createTransport(spec: McpTransportSpec, onStderr: (chunk: string) => void): Transport {
  if (spec.kind === 'stdio') {
    const inherited = getDefaultEnvironment();
    // The interpreter of a `#!/usr/bin/env node` program is looked for on the child's PATH: never in the workspace for a user's server.
    if (spec.outsideOf !== undefined && spec.env.PATH === undefined) inherited.PATH = hostPath(inherited.PATH ?? '', spec.outsideOf);
    const env = { ...inherited, ...spec.env };
    // A server the user's own configuration defines runs unsandboxed and unchecked: its program is never one planted in the workspace.
    const command = spec.outsideOf === undefined ? spec.command : hostCommand(spec.command, env.PATH ?? '', spec.outsideOf);
    if (command === null) throw new Error(`"${spec.command}" is not on PATH outside the workspace (a program in a folder of the workspace is started only for a server the workspace defines and you trusted); write its full path`);
    // …nor, for any server, is the package npx runs for it or the npm config it reads: npm's project is the
    // user's config folder (a trusted workspace server's trust pins the files it names, not the workspace's node_modules).
    const prefix = spec.hostPrefix;
    mkdirSync(prefix, { recursive: true, mode: 0o700 });
    const transport = new StdioClientTransport({
      command,
      args: hostArgs(command, spec.args, prefix),
      env,
      cwd: spec.cwd,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer | string) => onStderr(chunk.toString()));
    return transport;
  }
  return new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: { ...spec.headers } } });
}
