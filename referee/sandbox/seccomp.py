"""The seccomp filter of sandboxed bots: a classic BPF program handed to bubblewrap that denies
nested user namespaces, foreign ABIs, syscalls a bot has no use for, file locks, leases and
watches (which would carry bits from one sandbox to another), the machine's figures of
``sysinfo``, the probes of the page cache that read no data (``mincore``, ``cachestat``,
``RWF_NOWAIT`` reads, Linux AIO), which would tell a process what another one read, and the
advice that drops or loads another process's cached pages of a shared file (``fadvise``,
``readahead``, ``MADV_COLD``, ``MADV_PAGEOUT``, ``process_madvise``), which would let a bot
evict a page for another to time its read."""

from __future__ import annotations

import errno
import platform
import struct

_CLONE_NEWUSER = 0x10000000
# Per machine: audit arch, the first number of a foreign ABI sharing the arch (x32), the
# numbers of clone, unshare, clone3, of the syscalls a bot has no use for, of fcntl and the
# syscalls of _SIGNALLING, of preadv2 and pwritev2 and the syscalls of MACHINE_WIDE, and of
# madvise and the syscalls of CACHE_ADVICE.
SYSCALLS = {
    "x86_64": (
        0xC000003E,
        0x40000000,
        {"clone": 56, "unshare": 272, "clone3": 435},
        {
            "ptrace": 101, "kexec_load": 246, "add_key": 248, "request_key": 249,
            "keyctl": 250, "perf_event_open": 298, "open_by_handle_at": 304,
            "process_vm_readv": 310, "process_vm_writev": 311, "bpf": 321,
            "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426,
            "io_uring_register": 427,
        },
        {"fcntl": 72, "flock": 73, "inotify_init": 253, "inotify_add_watch": 254,
         "inotify_init1": 294, "fanotify_init": 300, "fanotify_mark": 301},
        {"preadv2": 327, "pwritev2": 328, "sysinfo": 99, "mincore": 27, "cachestat": 451,
         "io_setup": 206},
        {"madvise": 28, "fadvise64": 221, "readahead": 187, "process_madvise": 440},
    ),
    "aarch64": (
        0xC00000B7,
        None,
        {"clone": 220, "unshare": 97, "clone3": 435},
        {
            "ptrace": 117, "kexec_load": 104, "add_key": 217, "request_key": 218,
            "keyctl": 219, "perf_event_open": 241, "open_by_handle_at": 265,
            "process_vm_readv": 270, "process_vm_writev": 271, "bpf": 280,
            "userfaultfd": 282, "io_uring_setup": 425, "io_uring_enter": 426,
            "io_uring_register": 427,
        },
        {"fcntl": 25, "flock": 32, "inotify_init1": 26, "inotify_add_watch": 27,
         "fanotify_init": 262, "fanotify_mark": 263},
        {"preadv2": 286, "pwritev2": 287, "sysinfo": 179, "mincore": 232, "cachestat": 451,
         "io_setup": 0},
        {"madvise": 233, "fadvise64": 223, "readahead": 213, "process_madvise": 440},
    ),
}  # fmt: skip
# Cross-sandbox signals through a file both bots can see (a read-only system file): the answer
# of each syscall, and of each fcntl() command (args[1]) that locks, leases or watches a file.
_SIGNALLING = {
    "flock": errno.ENOLCK,
    "inotify_init": errno.ENOSYS,
    "inotify_init1": errno.ENOSYS,
    "inotify_add_watch": errno.ENOSYS,
    "fanotify_init": errno.EPERM,
    "fanotify_mark": errno.EPERM,
}
# What tells a process about the machine or another process: sysinfo's machine-wide task count,
# load and free memory (the C library's sysconf(_SC_PHYS_PAGES) reads /proc/meminfo when it
# fails), whether a file's pages are cached without reading them (mincore, cachestat), and Linux
# AIO, whose iocb may ask for RWF_NOWAIT where the filter cannot see it (libaio users fall back
# to plain reads on ENOSYS).
MACHINE_WIDE = {
    "sysinfo": errno.ENOSYS,
    "mincore": errno.ENOSYS,
    "cachestat": errno.ENOSYS,
    "io_setup": errno.ENOSYS,
}
# Advice about the page cache of a file, which any reader may give and which acts on every
# process's pages of it: POSIX_FADV_DONTNEED drops a file's clean cached pages (another bot's
# next read of them then waits for the disk: a timed read tells), WILLNEED and readahead load
# them. Advice may be ignored: fadvise and readahead succeed (0) and do nothing, as on a file
# system without a page cache; process_madvise (cold or page out a process's pages) is ENOSYS.
CACHE_ADVICE = {"fadvise64": 0, "readahead": 0, "process_madvise": errno.ENOSYS}
#: madvise() advice (args[2]) that pages a mapping's pages out of memory, the file's cached pages
#: with them (MADV_COLD, MADV_PAGEOUT): EINVAL, as from a kernel before 5.4
MADVISE_DENIED = {20: errno.EINVAL, 21: errno.EINVAL}
#: ``RWF_NOWAIT``: a read that fails (EAGAIN) rather than wait for the disk, which tells what is
#: cached; preadv2/pwritev2 with it answer EOPNOTSUPP, as on a file system without it
RWF_NOWAIT = 0x8
FCNTL_DENIED = {
    5: errno.ENOLCK,  # F_GETLK
    6: errno.ENOLCK,  # F_SETLK
    7: errno.ENOLCK,  # F_SETLKW
    36: errno.ENOLCK,  # F_OFD_GETLK
    37: errno.ENOLCK,  # F_OFD_SETLK
    38: errno.ENOLCK,  # F_OFD_SETLKW
    1024: errno.ENOLCK,  # F_SETLEASE
    1025: errno.ENOLCK,  # F_GETLEASE
    1026: errno.EINVAL,  # F_NOTIFY (dnotify)
}


def seccomp_program(machine: str | None = None) -> bytes | None:
    """The seccomp filter of bots on ``machine`` (default: this one), None if unsupported.

    It denies (EPERM) creating a user namespace through clone() or unshare(), the syscalls in
    the table above, and every syscall of a foreign ABI (i386 or x32 on x86_64, which would
    otherwise bypass the numbers checked); clone3() gets ENOSYS so that the C library falls
    back to clone(), whose flags a classic BPF filter can inspect. File locks, leases and
    watches (flock, the fcntl() commands of ``FCNTL_DENIED``, inotify, fanotify) are denied
    too: on a file that two bots see they would carry bits from one sandbox to another; and so
    are the syscalls of ``MACHINE_WIDE``, reads and writes with ``RWF_NOWAIT``, the advice of
    ``CACHE_ADVICE`` (answered without effect) and madvise()'s ``MADVISE_DENIED``.
    """
    table = SYSCALLS.get(machine or platform.machine())
    if table is None:
        return None
    arch, foreign_from, cloning, denied, signalling, probes, advice = table
    allow, deny = 0x7FFF0000, 0x00050000 | errno.EPERM
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    code: list[tuple[int, int, int, int]] = [
        (ld, 0, 0, 4),  # seccomp_data.arch
        (jeq, 1, 0, arch),
        (ret, 0, 0, deny),
        (ld, 0, 0, 0),  # seccomp_data.nr
    ]
    if foreign_from is not None:
        code += [(jge, 0, 1, foreign_from), (ret, 0, 0, deny)]
    code += [(jeq, 0, 1, cloning["clone3"]), (ret, 0, 0, 0x00050000 | errno.ENOSYS)]
    for number in denied.values():
        code += [(jeq, 0, 1, number), (ret, 0, 0, deny)]
    for name, answer in _SIGNALLING.items():
        if name in signalling:
            code += [(jeq, 0, 1, signalling[name]), (ret, 0, 0, 0x00050000 | answer)]
    for name, answer in MACHINE_WIDE.items():
        code += [(jeq, 0, 1, probes[name]), (ret, 0, 0, 0x00050000 | answer)]
    for name, answer in CACHE_ADVICE.items():
        code += [(jeq, 0, 1, advice[name]), (ret, 0, 0, 0x00050000 | answer)]
    advised = [(ld, 0, 0, 32)]  # low half of seccomp_data.args[2]: madvise's advice
    for value, answer in MADVISE_DENIED.items():
        advised += [(jeq, 0, 1, value), (ret, 0, 0, 0x00050000 | answer)]
    advised.append((ret, 0, 0, allow))
    code += [(jeq, 0, len(advised), advice["madvise"]), *advised]
    for name in ("preadv2", "pwritev2"):  # flags: the low half of seccomp_data.args[5]
        code += [
            (jeq, 0, 4, probes[name]),
            (ld, 0, 0, 56),
            (jset, 0, 1, RWF_NOWAIT),
            (ret, 0, 0, 0x00050000 | errno.EOPNOTSUPP),
            (ret, 0, 0, allow),
        ]
    commands = [(ld, 0, 0, 24)]  # low half of seccomp_data.args[1]: fcntl's command
    for command, answer in FCNTL_DENIED.items():
        commands += [(jeq, 0, 1, command), (ret, 0, 0, 0x00050000 | answer)]
    commands.append((ret, 0, 0, allow))
    code += [(jeq, 0, len(commands), signalling["fcntl"]), *commands]
    code += [
        (jeq, 1, 0, cloning["clone"]),
        (jeq, 0, 3, cloning["unshare"]),
        (ld, 0, 0, 16),  # low half of seccomp_data.args[0]: the flags
        (jset, 0, 1, _CLONE_NEWUSER),
        (ret, 0, 0, deny),
        (ret, 0, 0, allow),
    ]
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in code)
