/**
 * The seccomp filter a sandboxed server runs under on Linux, handed to bubblewrap (`--seccomp FD`)
 * as a classic BPF program: an array of `struct sock_filter` (code u16, jt u8, jf u8, k u32, in the
 * machine's byte order) that the kernel runs on every system call's `struct seccomp_data` (nr at
 * offset 0, arch at 4, instruction pointer at 8, args[i] at 16 + 8i).
 *
 * It refuses what the mount namespace cannot hide:
 * - `socket()` of any family but AF_INET, AF_INET6 (the sandbox's own network namespace: its
 *   loopback only) and AF_NETLINK (also per namespace; what `getifaddrs` uses): so no host Unix
 *   socket in a folder the server can see is reachable (connect() needs a socket() first), nor
 *   AF_VSOCK (a virtual machine's host, which no network namespace separates). EACCES.
 * - `socketpair()` of a datagram type: a stream or seqpacket pair (Node's and Python's child pipes)
 *   is connected for good, but a datagram socket can be pointed at any socket path. EACCES.
 * - io_uring (`io_uring_setup`, `_enter`, `_register`), whose IORING_OP_SOCKET would make a socket
 *   without the call above. ENOSYS, so that libraries fall back to ordinary calls.
 * - the keyrings (`add_key`, `request_key`, `keyctl`): the session keyring is inherited from MCP
 *   Host, and its keys (Kerberos tickets, say) belong to the same user. ENOSYS.
 * - every system call of another ABI than the process's own (i386 or x32 on x86_64, AArch32 on
 *   aarch64), whose numbers differ and whose `socketcall` hides its arguments behind a pointer. EPERM.
 *
 * Written here: no seccomp binding is on npm that a VS Code extension could load without native code.
 * Only x86_64 and aarch64 are known; elsewhere there is no filter (`seccompProgram` is undefined).
 */

/** The numbers of the calls the filter looks at, per architecture (Linux's unistd tables). */
interface SyscallTable {
  /** AUDIT_ARCH_* of the 64-bit ABI, as seccomp_data.arch carries it. */
  auditArch: number;
  /** x86_64 only: the bit that marks an x32 call, which shares AUDIT_ARCH_X86_64. */
  x32Bit?: number;
  socket: number;
  socketpair: number;
  ioUring: number[];
  keyrings: number[];
}

const TABLES: Partial<Record<NodeJS.Architecture, SyscallTable>> = {
  x64: {
    auditArch: 0xc000003e,
    x32Bit: 0x40000000,
    socket: 41,
    socketpair: 53,
    ioUring: [425, 426, 427],
    keyrings: [248, 249, 250],
  },
  arm64: { auditArch: 0xc00000b7, socket: 198, socketpair: 199, ioUring: [425, 426, 427], keyrings: [217, 218, 219] },
};

const AF_INET = 2;
const AF_INET6 = 10;
const AF_NETLINK = 16;
const SOCK_STREAM = 1;
const SOCK_SEQPACKET = 5;
/** The type without SOCK_NONBLOCK and SOCK_CLOEXEC. */
const SOCK_TYPE_MASK = 0xf;

const EPERM = 1;
const EACCES = 13;
const ENOSYS = 38;

export const SECCOMP_RET_ALLOW = 0x7fff0000;
export const SECCOMP_RET_ERRNO = 0x00050000;

/** Classic BPF opcodes, the few the filter uses. */
export const BPF = {
  /** A = 32-bit word at offset k of seccomp_data. */
  LD_W_ABS: 0x20,
  /** A &= k */
  AND_K: 0x54,
  /** if (A == k) skip jt else skip jf */
  JEQ_K: 0x15,
  /** if (A >= k) … */
  JGE_K: 0x35,
  /** return k */
  RET_K: 0x06,
} as const;

export interface BpfInstruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
/** The low 32 bits of args[i] on a little-endian machine: an int argument, as the kernel reads it. */
const argLow = (i: number) => 16 + 8 * i;

const load = (offset: number): BpfInstruction => ({ code: BPF.LD_W_ABS, jt: 0, jf: 0, k: offset });
const ret = (k: number): BpfInstruction => ({ code: BPF.RET_K, jt: 0, jf: 0, k });
const errno = (e: number) => ret(SECCOMP_RET_ERRNO | e);

/**
 * A program built from labelled jumps: `jump(op, k, then, otherwise)` names the instructions to
 * go to, and `build()` turns the names into the forward offsets BPF needs (at most 255 ahead).
 */
class Program {
  private readonly items: Array<BpfInstruction | { label: string } | { op: number; k: number; then: string; otherwise: string }> = [];

  add(instruction: BpfInstruction): this {
    this.items.push(instruction);
    return this;
  }
  label(label: string): this {
    this.items.push({ label });
    return this;
  }
  /** `next` as a target is the following instruction. */
  jump(op: number, k: number, then: string, otherwise = 'next'): this {
    this.items.push({ op, k, then, otherwise });
    return this;
  }

  build(): BpfInstruction[] {
    const at = new Map<string, number>();
    let index = 0;
    for (const item of this.items) {
      if ('label' in item) at.set(item.label, index);
      else index++;
    }
    const out: BpfInstruction[] = [];
    for (const item of this.items) {
      if ('label' in item) continue;
      if ('code' in item) {
        out.push(item);
        continue;
      }
      const here = out.length;
      const offset = (target: string): number => {
        const to = target === 'next' ? here + 1 : at.get(target);
        if (to === undefined) throw new Error(`seccomp: no label ${target}`);
        const skip = to - here - 1;
        if (skip < 0 || skip > 255) throw new Error(`seccomp: jump to ${target} out of range`);
        return skip;
      };
      out.push({ code: item.op, jt: offset(item.then), jf: offset(item.otherwise), k: item.k });
    }
    return out;
  }
}

/** The filter's instructions for an architecture, or undefined where its numbers are not known. */
export function seccompInstructions(arch: NodeJS.Architecture = process.arch): BpfInstruction[] | undefined {
  const t = TABLES[arch];
  if (!t) return undefined;
  const p = new Program();
  p.add(load(OFFSET_ARCH)).jump(BPF.JEQ_K, t.auditArch, 'native', 'foreign');
  p.label('native').add(load(OFFSET_NR));
  if (t.x32Bit !== undefined) p.jump(BPF.JGE_K, t.x32Bit, 'foreign');
  p.jump(BPF.JEQ_K, t.socket, 'socket');
  p.jump(BPF.JEQ_K, t.socketpair, 'socketpair');
  for (const nr of [...t.ioUring, ...t.keyrings]) p.jump(BPF.JEQ_K, nr, 'unsupported');
  p.add(ret(SECCOMP_RET_ALLOW));
  p.label('socket').add(load(argLow(0)));
  for (const family of [AF_INET, AF_INET6, AF_NETLINK]) p.jump(BPF.JEQ_K, family, 'allow');
  p.add(errno(EACCES));
  p.label('socketpair')
    .add(load(argLow(1)))
    .add({ code: BPF.AND_K, jt: 0, jf: 0, k: SOCK_TYPE_MASK });
  p.jump(BPF.JEQ_K, SOCK_STREAM, 'allow').jump(BPF.JEQ_K, SOCK_SEQPACKET, 'allow');
  p.add(errno(EACCES));
  p.label('unsupported').add(errno(ENOSYS));
  p.label('foreign').add(errno(EPERM));
  p.label('allow').add(ret(SECCOMP_RET_ALLOW));
  return p.build();
}

/** The program as bubblewrap reads it from its `--seccomp` descriptor: 8 bytes per instruction, little-endian. */
export function seccompProgram(arch: NodeJS.Architecture = process.arch): Buffer | undefined {
  const instructions = seccompInstructions(arch);
  if (!instructions) return undefined;
  const out = Buffer.alloc(instructions.length * 8);
  instructions.forEach((ins, i) => {
    out.writeUInt16LE(ins.code, i * 8);
    out.writeUInt8(ins.jt, i * 8 + 2);
    out.writeUInt8(ins.jf, i * 8 + 3);
    out.writeUInt32LE(ins.k >>> 0, i * 8 + 4);
  });
  return out;
}
