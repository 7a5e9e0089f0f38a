/**
 * A classic-BPF seccomp filter for sandboxed commands, built by hand (no native code):
 * - `socket(AF_UNIX, …)` fails with EPERM: pathname sockets are files, and a read-only bind
 *   does not stop `connect()`, so without this a command could talk to any daemon whose
 *   socket it can see (the Docker daemon, an ssh-agent, Legion's own servers).
 *   `socketpair()` stays allowed (pipes between a command's own processes).
 * - `unshare`/`clone` asking for a new user namespace fail with EPERM, `clone3` with ENOSYS
 *   (its flags are behind a pointer; libc and runtimes fall back to `clone`): a new user
 *   namespace would give the command the right to unmount the read-only binds.
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
const CLONE_NEWUSER = 0x1000_0000;
const X32_SYSCALL_BIT = 0x4000_0000;

// struct seccomp_data: int nr; u32 arch; u64 ip; u64 args[6]
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const OFFSET_ARG0_LOW = 16;

interface Arch {
  readonly audit: number;
  readonly socket: number;
  readonly unshare: number;
  readonly clone: number;
  readonly clone3: number;
  /** x86-64 also runs x32 system calls (numbers with bit 30 set): refuse them all. */
  readonly x32: boolean;
}

const ARCHES: Readonly<Record<string, Arch>> = {
  x64: { audit: 0xc000_003e, socket: 41, unshare: 272, clone: 56, clone3: 435, x32: true },
  arm64: { audit: 0xc000_00b7, socket: 198, unshare: 97, clone: 220, clone3: 435, x32: false },
};

type Insn = [code: number, jt: number, jf: number, k: number];

/** The filter program for `arch` (a `process.arch` value), or undefined when unknown. */
export function seccompFilter(arch: string = process.arch): Buffer | undefined {
  const a = ARCHES[arch];
  if (!a) return undefined;
  const deny = (errno: number) => RET_ERRNO | errno;
  // Labels are resolved by hand: jt/jf count the instructions to skip.
  const program: Insn[] = [
    /* 0 */ [BPF_LD_W_ABS, 0, 0, OFFSET_ARCH],
    /* 1 */ [BPF_JEQ_K, 1, 0, a.audit],            // our arch → 3
    /* 2 */ [BPF_RET_K, 0, 0, deny(EPERM)],        // another ABI (i386 on x86-64…): refuse
    /* 3 */ [BPF_LD_W_ABS, 0, 0, OFFSET_NR],
    /* 4 */ a.x32 ? [BPF_JSET_K, 0, 1, X32_SYSCALL_BIT] : [BPF_JEQ_K, 0, 1, 0xffff_ffff], // x32 → 5, else 6
    /* 5 */ [BPF_RET_K, 0, 0, deny(EPERM)],
    /* 6 */ [BPF_JEQ_K, 0, 2, a.socket],           // socket → 7, else 9
    /* 7 */ [BPF_LD_W_ABS, 0, 0, OFFSET_ARG0_LOW],
    /* 8 */ [BPF_JEQ_K, 6, 7, AF_UNIX],            // AF_UNIX → 15 (EPERM), else 16 (allow)
    /* 9 */ [BPF_JEQ_K, 1, 0, a.unshare],          // unshare → 11
    /* 10 */ [BPF_JEQ_K, 0, 2, a.clone],           // clone → 11, else 13
    /* 11 */ [BPF_LD_W_ABS, 0, 0, OFFSET_ARG0_LOW],
    /* 12 */ [BPF_JSET_K, 2, 3, CLONE_NEWUSER],    // new user namespace → 15, else 16
    /* 13 */ [BPF_JEQ_K, 0, 2, a.clone3],          // clone3 → 14, else 16
    /* 14 */ [BPF_RET_K, 0, 0, deny(ENOSYS)],
    /* 15 */ [BPF_RET_K, 0, 0, deny(EPERM)],
    /* 16 */ [BPF_RET_K, 0, 0, RET_ALLOW],
  ];
  const out = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], i) => {
    out.writeUInt16LE(code, i * 8);
    out.writeUInt8(jt, i * 8 + 2);
    out.writeUInt8(jf, i * 8 + 3);
    out.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return out;
}
