import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpTransportSpec } from './servers';

/**
 * The SDK transport for one server. stdio: the command runs without a shell, in `cwd`, with
 * the SDK's short list of inherited variables (PATH, HOME, USER, SHELL, TERM, LOGNAME) plus
 * the entry's `env` — API keys of Legion's environment are not passed on; stderr goes to
 * `onStderr`. http: streamable HTTP with the entry's headers on every request.
 */
export function createTransport(spec: McpTransportSpec, onStderr: (chunk: string) => void): Transport {
  if (spec.kind === 'stdio') {
    const transport = new StdioClientTransport({
      command: spec.command,
      args: [...spec.args],
      env: { ...getDefaultEnvironment(), ...spec.env },
      cwd: spec.cwd,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer | string) => onStderr(chunk.toString()));
    return transport;
  }
  return new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: { ...spec.headers } } });
}
