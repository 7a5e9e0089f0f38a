/**
 * Say when a failed sandboxed command was (probably) stopped by the sandbox, so the agent
 * asks for what it needs instead of retrying blindly. Recognized by what tools print for
 * the errors the sandbox causes (EROFS, EACCES, EPERM, unreachable network, a missing
 * process, a failed fork); only consulted when the command failed.
 */
export interface BlockedContext {
  /** `hosts`: only the listed hosts, through the proxy. */
  readonly network: 'none' | 'all' | 'hosts';
  /** The process limit, when one applies. */
  readonly maxProcesses?: number;
}

interface Pattern {
  readonly test: RegExp;
  readonly line: (context: BlockedContext) => string | undefined;
}

const PATTERNS: readonly Pattern[] = [
  {
    test: /resolves to a local address/,
    line: (context) => context.network === 'hosts'
      ? 'blocked by the sandbox: the host resolves to an address of this machine (loopback, link-local or one of its interfaces); the proxy reaches remote hosts only (see docs/sandbox.md#limits)'
      : undefined,
  },
  {
    test: /CONNECT tunnel failed, response 403|is not in sandbox\.network|\b403 Forbidden\b|returned error: 403/i,
    line: (context) => context.network === 'hosts'
      ? 'blocked by the sandbox: the host is not in sandbox.network (add it in .legion/config.yaml, see docs/sandbox.md), or it resolves to an address of this machine'
      : undefined,
  },
  {
    test: /read-only file system|\bEROFS\b/i,
    line: () => 'blocked by the sandbox: write outside the workspace (everything but the workspace is read-only, and so are the config and hooks of .git/ and the files that trusted hooks and MCP servers run or are defined in)',
  },
  {
    test: /failed to connect|couldn't connect to server|network is unreachable|\bENETUNREACH\b|could not resolve host|temporary failure in name resolution|\bEAI_AGAIN\b|name or service not known|getaddrinfo|connection refused|\bECONNREFUSED\b/i,
    line: (context) => context.network === 'all'
      ? undefined
      : context.network === 'hosts'
        ? 'blocked by the sandbox: only the hosts of sandbox.network are reachable, through the proxy in HTTP(S)_PROXY (see docs/sandbox.md)'
        : 'blocked by the sandbox: no network (sandbox.network is none; a workspace can allow it with `sandbox: { network: all }` in .legion/config.yaml, see docs/sandbox.md)',
  },
  {
    test: /device or resource busy|\bEBUSY\b/i,
    line: () => 'blocked by the sandbox: .git, .legion/ and the other protected paths are fixed in place (they cannot be moved, removed or replaced)',
  },
  {
    test: /bwrap: /,
    line: () => 'the sandbox could not start this command (the bubblewrap error is above)',
  },
  {
    test: /fork: (retry|resource temporarily unavailable)|cannot fork|\bEAGAIN\b.*(spawn|fork)|resource temporarily unavailable/i,
    line: (context) => context.maxProcesses === undefined ? undefined : `blocked by the sandbox: at most ${context.maxProcesses} processes at once`,
  },
  {
    test: /no such process|\bESRCH\b/i,
    line: () => 'blocked by the sandbox: processes outside it (Legion included) are invisible to the command',
  },
  {
    test: /permission denied|\bEACCES\b/i,
    line: () => 'possibly blocked by the sandbox: secret paths (.legion/, ~/.ssh, ~/.aws, .env files, the credential files of docs/sandbox.md#what-is-hidden and the secret patterns of the rules) are unreadable in it',
  },
  {
    test: /operation not permitted|\bEPERM\b/i,
    line: () => 'possibly blocked by the sandbox: Unix sockets, new namespaces, ptrace, bpf, perf events, key rings and privileged operations are not permitted in it',
  },
  {
    test: /function not implemented|\bENOSYS\b/i,
    line: () => 'possibly blocked by the sandbox: io_uring is not available in it',
  },
];

/** The line to append to a failed command's result, or undefined when nothing points at the sandbox. */
export function explainBlocked(output: string, context: BlockedContext): string | undefined {
  for (const pattern of PATTERNS) {
    if (!pattern.test.test(output)) continue;
    const line = pattern.line(context);
    if (line) return line;
  }
  return undefined;
}
