import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ABSENT_SYSCALLS, DENIED_SYSCALLS, seccompFilter } from '../../../../src/tools/sandbox/seccomp';

// The filter program run by a small classic-BPF interpreter, for both CPUs it knows (the escape
// corpus runs it for real only on this machine's). Expected numbers are from the kernel's tables.
const ALLOW = 0x7fff_0000;
const EPERM = 0x0005_0001;
const ENOSYS = 0x0005_0026;

function run(program: Buffer, data: { nr: number; arch: number; arg0?: number }): number {
  const word = (offset: number) => (offset === 0 ? data.nr >>> 0 : offset === 4 ? data.arch >>> 0 : offset === 16 ? (data.arg0 ?? 0) >>> 0 : 0);
  let acc = 0;
  for (let pc = 0; pc * 8 < program.length; pc++) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) acc = word(k);
    else if (code === 0x15) pc += acc === k ? jt : jf;
    else if (code === 0x45) pc += (acc & k) !== 0 ? jt : jf;
    else if (code === 0x06) return k;
    else throw new Error(`unknown instruction ${code}`);
  }
  throw new Error('fell off the end');
}

const TABLES = {
  x64: {
    arch: 0xc000_003e,
    nr: { bpf: 321, userfaultfd: 323, perf_event_open: 298, keyctl: 250, add_key: 248, request_key: 249, ptrace: 101, io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427, socket: 41, clone: 56, unshare: 272, clone3: 435, read: 0, openat: 257, socketpair: 53, execve: 59 },
  },
  arm64: {
    arch: 0xc000_00b7,
    nr: { bpf: 280, userfaultfd: 282, perf_event_open: 241, keyctl: 219, add_key: 217, request_key: 218, ptrace: 117, io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427, socket: 198, clone: 220, unshare: 97, clone3: 435, read: 63, openat: 56, socketpair: 199, execve: 221 },
  },
} as const;

for (const [cpu, table] of Object.entries(TABLES)) {
  test(`seccomp (${cpu}): the bypass families are refused, ordinary calls allowed`, () => {
    const program = seccompFilter(cpu)!;
    const call = (name: keyof typeof table.nr, arg0?: number) => run(program, { nr: table.nr[name], arch: table.arch, ...(arg0 !== undefined ? { arg0 } : {}) });
    for (const name of ['bpf', 'userfaultfd', 'perf_event_open', 'keyctl', 'add_key', 'request_key', 'ptrace'] as const) assert.equal(call(name), EPERM, name);
    for (const name of ['io_uring_setup', 'io_uring_enter', 'io_uring_register', 'clone3'] as const) assert.equal(call(name), ENOSYS, name);
    assert.equal(call('socket', 1), EPERM, 'AF_UNIX');
    assert.equal(call('socket', 40), EPERM, 'AF_VSOCK');
    assert.equal(call('socket', 2), ALLOW, 'AF_INET');
    assert.equal(call('socket', 10), ALLOW, 'AF_INET6');
    assert.equal(call('clone', 0x1000_0000 | 17), EPERM, 'clone(CLONE_NEWUSER)');
    assert.equal(call('unshare', 0x1000_0000), EPERM, 'unshare(CLONE_NEWUSER)');
    assert.equal(call('clone', 0x0120_0011), ALLOW, 'fork-like clone');
    for (const name of ['read', 'openat', 'socketpair', 'execve'] as const) assert.equal(call(name), ALLOW, name);
    assert.equal(run(program, { nr: 0, arch: 0x4000_0003 }), EPERM, 'another ABI (i386)');
    if (cpu === 'x64') assert.equal(run(program, { nr: 0x4000_0000 | 0, arch: table.arch }), EPERM, 'x32');
  });
}

test('seccomp: every named system call has a number on both CPUs, and the lists do not overlap', () => {
  assert.equal(new Set([...DENIED_SYSCALLS, ...ABSENT_SYSCALLS]).size, DENIED_SYSCALLS.length + ABSENT_SYSCALLS.length);
  for (const cpu of ['x64', 'arm64']) {
    const program = seccompFilter(cpu)!;
    assert.ok(program.length / 8 < 255, 'jumps stay within 8 bits');
  }
});
