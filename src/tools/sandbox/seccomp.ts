/**
 * A classic-BPF seccomp filter for sandboxed commands, built by hand (no native code). It is a
 * deny list of the kernel surfaces that reach past the sandbox's mounts and namespaces
 * (the table is in docs/sandbox.md#seccomp); everything else shell work needs stays allowed.
 * - `socket(AF_UNIX, …)` and `socket(AF_VSOCK, …)` fail with EPERM: pathname sockets are
 *   files, and a read-only bind does not stop `connect()`, so without this a command could
 *   talk to any daemon whose socket it can see (the Docker daemon, an ssh-agent, Legion's own
 *   servers); vsock is not namespaced (it reaches the hypervisor's host). `socketpair()` stays.
 * - The io_uring system calls fail with ENOSYS (as on a kernel built without io_uring; libuv
 *   and liburing fall back to plain system calls): io_uring's own operations (IORING_OP_SOCKET,
 *   IORING_OP_CONNECT, …) would otherwise bypass every argument check of this filter.
 * - `bpf`, `userfaultfd`, `perf_event_open`, the key-ring calls (`keyctl`, `add_key`,
 *   `request_key`: the user's keyrings are not namespaced), `ptrace` and
 *   `process_vm_readv`/`process_vm_writev`/`pidfd_getfd` (taking over another process of the
 *   call, e.g. the host-list relay), the mount API (`mount`, `umount2`, `pivot_root`,
 *   `open_tree`, `move_mount`, `fsopen`, `fsconfig`, `fsmount`, `fspick`, `mount_setattr`),
 *   `setns`, `open_by_handle_at` and `name_to_handle_at` fail with EPERM: each is a known
 *   escape or kernel-attack family; most also need capabilities the sandbox has dropped, so
 *   this is a second wall.
 * - `unshare`/`clone` asking for a new user namespace fail with EPERM, `clone3` with ENOSYS
 *   (its flags are behind a pointer; libc and runtimes fall back to `clone`): a new user
 *   namespace would give the command the right to unmount the read-only binds.
 * - Any other ABI (i386 or x32 system calls on x86-64) is refused outright.
 * Only x86-64 and aarch64 are known; `seccompFilter` returns undefined elsewhere.
 * The format is `struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; }`, little-endian, as
 * bubblewrap's `--seccomp FD` reads it.
 */

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JSET_K = 0x45;
const BPF_RET_K = 0x06;

const RET_ALLOW = 0x7fff_0000;
const RET_ERRNO = 0x0005_0000;
const EPERM = 1;
const ENOSYS = 38;
const AF_UNIX = 1;
const AF_VSOCK = 40;
const CLONE_NEWUSER = 0x1000_0000;
const X32_SYSCALL_BIT = 0x4000_0000;

// struct seccomp_data: int nr; u32 arch; u64 ip; u64 args[6]
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const OFFSET_ARG0_LOW = 16;

/** System calls refused with EPERM, by name (numbers per CPU below). */
export const DENIED_SYSCALLS = [
  'bpf', 'userfaultfd', 'perf_event_open', 'keyctl', 'add_key', 'request_key',
  'ptrace', 'process_vm_readv', 'process_vm_writev', 'pidfd_getfd',
  'mount', 'umount2', 'pivot_root', 'open_tree', 'move_mount', 'fsopen', 'fsconfig', 'fsmount', 'fspick', 'mount_setattr',
  'setns', 'open_by_handle_at', 'name_to_handle_at',
] as const;
/** System calls refused with ENOSYS: callers fall back to something the filter can check. */
export const ABSENT_SYSCALLS = ['io_uring_setup', 'io_uring_enter', 'io_uring_register', 'clone3'] as const;

type Denied = (typeof DENIED_SYSCALLS)[number] | (typeof ABSENT_SYSCALLS)[number] | 'socket' | 'unshare' | 'clone';

interface Arch {
  readonly audit: number;
  readonly nr: Readonly<Record<Denied, number>>;
  /** x86-64 also runs x32 system calls (numbers with bit 30 set): refuse them all. */
  readonly x32: boolean;
}

// Since Linux 5.x, new system calls share one number on every CPU (io_uring 425–427, mount API 428–433…).
const COMMON = {
  pidfd_getfd: 438, open_tree: 428, move_mount: 429, fsopen: 430, fsconfig: 431, fsmount: 432, fspick: 433, mount_setattr: 442,
  io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427, clone3: 435,
} as const;

const ARCHES: Readonly<Record<string, Arch>> = {
  x64: {
    audit: 0xc000_003e,
    x32: true,
    nr: {
      ...COMMON, socket: 41, unshare: 272, clone: 56, bpf: 321, userfaultfd: 323, perf_event_open: 298, keyctl: 250, add_key: 248,
      request_key: 249, ptrace: 101, process_vm_readv: 310, process_vm_writev: 311, mount: 165, umount2: 166, pivot_root: 155,
      setns: 308, open_by_handle_at: 304, name_to_handle_at: 303,
    },
  },
  arm64: {
    audit: 0xc000_00b7,
    x32: false,
    nr: {
      ...COMMON, socket: 198, unshare: 97, clone: 220, bpf: 280, userfaultfd: 282, perf_event_open: 241, keyctl: 219, add_key: 217,
      request_key: 218, ptrace: 117, process_vm_readv: 270, process_vm_writev: 271, mount: 40, umount2: 39, pivot_root: 41,
      setns: 268, open_by_handle_at: 265, name_to_handle_at: 264,
    },
  },
};

/** One instruction; jumps name a label, resolved by `assemble`. */
type Insn =
  | { op: 'ld'; offset: number }
  | { op: 'jeq' | 'jset'; k: number; then: string; else?: string }
  | { op: 'ret'; value: number }
  | { op: 'label'; name: string };

/** The filter program for `arch` (a `process.arch` value), or undefined when unknown. */
export function seccompFilter(arch: string = process.arch): Buffer | undefined {
  const a = ARCHES[arch];
  if (!a) return undefined;
  const program: Insn[] = [
    { op: 'ld', offset: OFFSET_ARCH },
    { op: 'jeq', k: a.audit, then: 'native', else: 'eperm' },
    { op: 'label', name: 'native' },
    { op: 'ld', offset: OFFSET_NR },
    ...(a.x32 ? [{ op: 'jset', k: X32_SYSCALL_BIT, then: 'eperm' } as Insn] : []),
    ...DENIED_SYSCALLS.map((name): Insn => ({ op: 'jeq', k: a.nr[name], then: 'eperm' })),
    ...ABSENT_SYSCALLS.map((name): Insn => ({ op: 'jeq', k: a.nr[name], then: 'enosys' })),
    { op: 'jeq', k: a.nr.socket, then: 'socket' },
    { op: 'jeq', k: a.nr.unshare, then: 'namespaces' },
    { op: 'jeq', k: a.nr.clone, then: 'namespaces' },
    { op: 'ret', value: RET_ALLOW },
    { op: 'label', name: 'socket' },
    { op: 'ld', offset: OFFSET_ARG0_LOW },
    { op: 'jeq', k: AF_UNIX, then: 'eperm' },
    { op: 'jeq', k: AF_VSOCK, then: 'eperm' },
    { op: 'ret', value: RET_ALLOW },
    { op: 'label', name: 'namespaces' },
    { op: 'ld', offset: OFFSET_ARG0_LOW },
    { op: 'jset', k: CLONE_NEWUSER, then: 'eperm' },
    { op: 'ret', value: RET_ALLOW },
    { op: 'label', name: 'eperm' },
    { op: 'ret', value: RET_ERRNO | EPERM },
    { op: 'label', name: 'enosys' },
    { op: 'ret', value: RET_ERRNO | ENOSYS },
  ];
  return assemble(program);
}

/** Lay out the program: labels become jump offsets (a missing `else` falls through). */
function assemble(program: readonly Insn[]): Buffer {
  const labels = new Map<string, number>();
  const code = program.filter((insn): insn is Exclude<Insn, { op: 'label' }> => insn.op !== 'label');
  let index = 0;
  for (const insn of program) {
    if (insn.op === 'label') labels.set(insn.name, index);
    else index++;
  }
  const out = Buffer.alloc(code.length * 8);
  code.forEach((insn, i) => {
    const skipTo = (label: string | undefined) => {
      if (label === undefined) return 0;
      const target = labels.get(label);
      if (target === undefined || target <= i || target - i - 1 > 255) throw new Error(`seccomp: bad jump to ${label}`);
      return target - i - 1;
    };
    let words: [number, number, number, number];
    if (insn.op === 'ld') words = [BPF_LD_W_ABS, 0, 0, insn.offset];
    else if (insn.op === 'ret') words = [BPF_RET_K, 0, 0, insn.value];
    else words = [insn.op === 'jeq' ? BPF_JEQ_K : BPF_JSET_K, skipTo(insn.then), skipTo(insn.else), insn.k];
    out.writeUInt16LE(words[0], i * 8);
    out.writeUInt8(words[1], i * 8 + 2);
    out.writeUInt8(words[2], i * 8 + 3);
    out.writeUInt32LE(words[3] >>> 0, i * 8 + 4);
  });
  return out;
}
