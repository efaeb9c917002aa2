"""A seccomp filter that closes the one store namespaces leave open: the kernel keyrings.

Every sandboxed bot runs as the same user (nobody) in the same user namespace, and a
user's keyring belongs to the user namespace, not to a process: a key added by a bot in
one match is still there for the bot of the next match (or of a match running at the same
time), a way to remember a deal that no mount, PID, IPC or network namespace closes.
``add_key``, ``request_key`` and ``keyctl`` therefore fail with EPERM in a sandbox;
nothing a card bot does needs them. The filter is classic BPF, assembled here (no
libseccomp), for x86-64 (with its i386 and x32 ABIs) and arm64; on another architecture
no filter is installed.

>>> len(program()) % 8, len(program()) // 8
(0, 22)
"""

from __future__ import annotations

import struct

# linux/filter.h, linux/seccomp.h, linux/audit.h
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JSET_K = 0x45
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_EPERM = 1
_OFFSET_NR, _OFFSET_ARCH = 0, 4
_X32_BIT = 0x40000000

KEY_SYSCALLS = {
    0xC000003E: (248, 249, 250),  # AUDIT_ARCH_X86_64: add_key, request_key, keyctl
    0x40000003: (286, 287, 288),  # AUDIT_ARCH_I386
    0xC00000B7: (217, 218, 219),  # AUDIT_ARCH_AARCH64
}
"""The keyring system calls per architecture."""

Insn = tuple[int, int | str, int | str, int]
"""code, jump if true, jump if false (offsets, or labels), k."""


def _assemble(code: list[Insn | str]) -> bytes:
    """Resolve labels (strings in the list) to forward offsets and pack the program."""
    where: dict[str, int] = {}
    insns: list[Insn] = []
    for item in code:
        if isinstance(item, str):
            where[item] = len(insns)
        else:
            insns.append(item)
    out = b""
    for i, (op, jt, jf, k) in enumerate(insns):
        t = where[jt] - i - 1 if isinstance(jt, str) else jt
        f = where[jf] - i - 1 if isinstance(jf, str) else jf
        out += struct.pack("=HBBI", op, t, f, k)
    return out


def program() -> bytes:
    """The filter: EPERM for the keyring calls (and for every x32 call), else allow."""
    code: list[Insn | str] = [(_LD_W_ABS, 0, 0, _OFFSET_ARCH)]
    for arch in KEY_SYSCALLS:
        code.append((_JEQ_K, f"arch{arch}", 0, arch))
    code.append((_RET_K, 0, 0, _RET_ALLOW))  # an architecture not listed: no filter
    for arch, numbers in KEY_SYSCALLS.items():
        code.append(f"arch{arch}")
        code.append((_LD_W_ABS, 0, 0, _OFFSET_NR))
        if arch == 0xC000003E:
            code.append((_JSET_K, "deny", 0, _X32_BIT))
        for number in numbers:
            code.append((_JEQ_K, "deny", 0, number))
        code.append((_RET_K, 0, 0, _RET_ALLOW))
    code.append("deny")
    code.append((_RET_K, 0, 0, _RET_ERRNO | _EPERM))
    return _assemble(code)


__all__ = ["KEY_SYSCALLS", "program"]
