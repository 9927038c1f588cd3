"""The seccomp filter of sandboxed bots: a classic BPF program handed to bubblewrap that denies
nested user namespaces, foreign ABIs, syscalls a bot has no use for, and file locks, leases and
watches (which would carry bits from one sandbox to another)."""

from __future__ import annotations

import errno
import platform
import struct

_CLONE_NEWUSER = 0x10000000
# Per machine: audit arch, the first number of a foreign ABI sharing the arch (x32), the
# numbers of clone, unshare, clone3, of the syscalls a bot has no use for, and of fcntl and the
# syscalls of _SIGNALLING.
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
    too: on a file that two bots see they would carry bits from one sandbox to another.
    """
    table = SYSCALLS.get(machine or platform.machine())
    if table is None:
        return None
    arch, foreign_from, cloning, denied, signalling = table
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
