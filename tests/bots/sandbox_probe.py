"""A hostile bot for the sandbox tests: ``sandbox_probe.py ACTION [ARGS...]``.

Each action tries something a bot must not be able to do (or checks its environment) and
prints ``RESULT <word> [detail]`` lines that the tests read from the captured log.
"""

import errno
import os
import socket
import sys
import time


def result(word, detail=""):
    # one write(2) per line: concurrent processes of the tree never interleave a line
    os.write(1, f"RESULT {word} {detail}\n".encode())


def connect_tcp(host, port):
    try:
        socket.create_connection((host, int(port)), timeout=2).close()
    except OSError as error:
        result("blocked", repr(error))
    else:
        result("connected")


def connect_abstract(name):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect("\0" + name)
    except OSError as error:
        result("blocked", repr(error))
    else:
        result("connected")


def read(*paths):
    for path in paths:
        try:
            with open(path) as handle:
                result("read", f"{path} {handle.read()!r}")
        except OSError as error:
            result("denied", f"{path} {error!r}")
        try:
            result("listed", f"{path} {os.listdir(os.path.dirname(path))}")
        except OSError as error:
            result("unlisted", f"{path} {error!r}")


def readable(*paths):
    """Which files (binary ones too) the bot's uid can read; and whoami through /etc/passwd."""
    import pwd

    for path in paths:
        try:
            with open(path, "rb") as handle:
                result("readable", f"{path} {len(handle.read())}")
        except OSError as error:
            result("unreadable", f"{path} {error.strerror}")
    try:
        result("user", pwd.getpwuid(os.getuid()).pw_name)
    except KeyError:
        result("user", "-")


def write(*paths):
    for path in paths:
        try:
            with open(path, "w") as handle:
                handle.write("x")
        except OSError as error:
            result("denied", f"{path} {error!r}")
        else:
            result("wrote", path)


def whoami():
    with open("/proc/self/status") as handle:
        status = handle.read()
    caps = [line.split()[1] for line in status.splitlines() if line.startswith("CapEff")]
    result("uid", os.getuid())
    result("euid", os.geteuid())
    result("gid", os.getgid())
    result("groups", ",".join(map(str, os.getgroups())) or "-")
    result("caps", caps[0])
    result("pid", os.getpid())
    result("home", os.environ.get("HOME"))
    result("cwd", os.getcwd())
    result("env", ",".join(sorted(os.environ)))
    pools = (
        os.environ.get(name)
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MALLOC_ARENA_MAX")
    )
    result("threads", " ".join(map(str, pools)))


def signal_pid(pid):
    pid = int(pid)
    try:
        os.kill(pid, 0)
    except OSError as error:
        result("blocked", repr(error))
    else:
        result("signalled")
    result("visible" if os.path.exists(f"/proc/{pid}") else "invisible")


def fork_bomb():
    children = 0
    while children < 10000:
        try:
            pid = os.fork()
        except OSError as error:
            result("fork_failed", f"{children} {errno.errorcode.get(error.errno)}")
            break
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        children += 1
    sys.stdout.flush()
    time.sleep(60)


def memory_hog(megabytes):
    hoard = []
    try:
        for _ in range(int(megabytes)):
            hoard.append(bytearray(1 << 20))
    except MemoryError:
        result("memory_error", len(hoard))
        sys.exit(3)
    result("allocated", len(hoard))


def big_file(megabytes):
    path = os.path.join(os.environ["HOME"], "big")
    chunk = b"x" * (1 << 20)
    written = 0
    try:
        with open(path, "wb") as handle:
            for _ in range(int(megabytes)):
                handle.write(chunk)
                handle.flush()
                written += 1
    except OSError as error:
        result("write_failed", f"{written} {errno.errorcode.get(error.errno)}")
    else:
        result("written", written)


def fill_scratch(megabytes):
    chunk = b"x" * (1 << 20)
    for i in range(int(megabytes)):
        try:
            with open(os.path.join(os.environ["HOME"], f"f{i}"), "wb") as handle:
                handle.write(chunk)
        except OSError as error:
            result("fill_failed", f"{i} {errno.errorcode.get(error.errno)}")
            return
    result("filled", megabytes)


def flood(megabytes):
    line = b"y" * 1023 + b"\n"
    out = sys.stdout.buffer
    for _ in range(int(megabytes) * 1024):
        out.write(line)
    out.write(b"END OF FLOOD\n")
    out.flush()


def tree(depth):
    """Children and grandchildren, some escaping to new sessions, then sleep forever."""
    for _ in range(2):
        if os.fork() == 0:
            if os.fork() == 0:
                os.setsid()  # try to leave the process group
                if os.fork() == 0:
                    result("daemon", os.getpid())
                    time.sleep(120)
                    os._exit(0)
                os._exit(0)
            time.sleep(120)
            os._exit(0)
    time.sleep(120)


def scratch_put(name):
    with open(os.path.join(os.environ["HOME"], name), "w") as handle:
        handle.write("left behind")
    result("put", os.environ["HOME"])
    time.sleep(120)


def scratch_list():
    result("scratch", ",".join(sorted(os.listdir(os.environ["HOME"]))) or "-")


def zmq_hello(endpoint):
    import zmq

    context = zmq.Context()
    sock = context.socket(zmq.DEALER)
    sock.connect(endpoint)
    sock.send(b"hello from the sandbox")
    if sock.poll(5000):
        result("reply", sock.recv().decode())
    sock.close(0)
    context.term()


def imports():
    import ohseven.core.rules
    import ohseven.sdk

    result("imported", f"{ohseven.sdk.__name__} {ohseven.core.rules.__name__}")
    try:
        import ohseven.referee  # noqa: F401
    except ImportError:
        result("referee", "hidden")
    else:
        result("referee", "visible")


def user_namespace():
    """Try to create a user namespace (root-like powers over a new set of kernel objects)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x10000000) == 0:  # CLONE_NEWUSER
        result("unshared")
    else:
        result("blocked", errno.errorcode.get(ctypes.get_errno()))
    pid = os.fork()  # and through clone(), as a forked child
    if pid == 0:
        os._exit(0 if libc.unshare(0x10000000) == 0 else 1)
    result("child", "unshared" if os.waitpid(pid, 0)[1] == 0 else "blocked")


def exotic():
    """Syscalls a bot has no use for: io_uring_setup, bpf, userfaultfd, keyctl, ptrace."""
    import ctypes
    import platform

    numbers = {
        "x86_64": {"io_uring_setup": 425, "bpf": 321, "userfaultfd": 323, "keyctl": 250},
        "aarch64": {"io_uring_setup": 425, "bpf": 280, "userfaultfd": 282, "keyctl": 219},
    }[platform.machine()]
    libc = ctypes.CDLL(None, use_errno=True)
    for name, number in numbers.items():
        ctypes.set_errno(0)
        value = libc.syscall(number, 0, 0, 0, 0)
        result("syscall", f"{name} {value} {errno.errorcode.get(ctypes.get_errno(), '-')}")


def machine_probes(path):
    """What would tell the bot about the machine or another bot's reads: sysinfo's task count
    and free memory, the page cache's residency of ``path`` (mincore, cachestat, a RWF_NOWAIT
    read, Linux AIO); and a plain preadv2, which must work."""
    import ctypes
    import mmap
    import platform

    numbers = {
        "x86_64": {"sysinfo": 99, "mincore": 27, "cachestat": 451, "io_setup": 206},
        "aarch64": {"sysinfo": 179, "mincore": 232, "cachestat": 451, "io_setup": 0},
    }[platform.machine()]
    libc = ctypes.CDLL(None, use_errno=True)
    info = ctypes.create_string_buffer(256)
    fd = os.open(path, os.O_RDONLY)
    # a private writable mapping of the file: its pages are the file's until written
    mapped = mmap.mmap(fd, 4096, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    address = ctypes.addressof(ctypes.c_char.from_buffer(mapped))
    vector = ctypes.create_string_buffer(8)
    arguments = {
        "sysinfo": (info,),
        "mincore": (ctypes.c_void_p(address), ctypes.c_size_t(4096), vector),
        "cachestat": (fd, info, info, 0),
        "io_setup": (1, info),
    }
    for name, number in numbers.items():
        ctypes.set_errno(0)
        value = libc.syscall(number, *arguments[name])
        result("probe", f"{name} {value} {errno.errorcode.get(ctypes.get_errno(), '-')}")
    for flags, word in ((os.RWF_NOWAIT, "nowait"), (0, "plain")):
        try:
            os.preadv(fd, [bytearray(16)], 0, flags)
            result("preadv2", f"{word} ok")
        except OSError as error:
            result("preadv2", f"{word} {_error_name(error)}")


def _error_name(error):
    return errno.errorcode.get(error.errno, str(error.errno))


def _lock_struct(kind):
    import struct

    # struct flock on 64-bit Linux: short l_type, short l_whence, off_t l_start, off_t l_len,
    # pid_t l_pid (the pid must be 0 for the OFD commands)
    return struct.pack("hhqqi4x", kind, 0, 0, 0, 0)


_LOCKS = {"flock": None, "fcntl": (6, 5), "ofd": (37, 36)}  # (SETLK, GETLK) commands


def lock_hold(kind, path):
    """Hold a write lock of ``kind`` on ``path`` (read-only: a shared lock for flock)."""
    import fcntl

    handle = open(path)  # noqa: SIM115 - held until the process ends
    try:
        if kind == "flock":
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        else:
            fcntl.fcntl(handle, _LOCKS[kind][0], _lock_struct(fcntl.F_RDLCK))
    except OSError as error:
        result("hold_failed", _error_name(error))
    else:
        result("holding", kind)
    time.sleep(60)


def lock_probe(kind, path):
    """Whether another process holds a lock of ``kind`` on ``path``: a bit through the file."""
    import fcntl
    import struct

    with open(path) as handle:
        try:
            if kind == "flock":
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    result("seen", "locked")
                else:
                    result("seen", "free")
            else:
                answer = fcntl.fcntl(handle, _LOCKS[kind][1], _lock_struct(fcntl.F_WRLCK))
                locked = struct.unpack("hhqqi4x", answer)[0] != fcntl.F_UNLCK
                result("seen", "locked" if locked else "free")
        except OSError as error:
            result("probe_failed", _error_name(error))


def file_touch(path, seconds):
    """Open and read ``path`` again and again (inotify events for a watcher elsewhere)."""
    deadline = time.monotonic() + float(seconds)
    while time.monotonic() < deadline:
        with open(path, "rb") as handle:
            handle.read(1)
        time.sleep(0.01)
    result("touched", path)


def inotify_watch(path, seconds):
    """Watch ``path`` with inotify: report whether any event arrives within ``seconds``."""
    import ctypes
    import select

    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(0)
    if fd < 0:
        result("watch_failed", errno.errorcode.get(ctypes.get_errno()))
        return
    if libc.inotify_add_watch(fd, path.encode(), 0xFFF) < 0:  # IN_ALL_EVENTS
        result("watch_failed", errno.errorcode.get(ctypes.get_errno()))
        return
    result("watching", path)
    ready = select.select([fd], [], [], float(seconds))[0]
    result("events", "some" if ready else "none")


def lease_notify(path):
    """A read lease and a dnotify watch on ``path`` (each would signal another process)."""
    import fcntl

    handle = os.open(path, os.O_RDONLY)
    for name, command, argument in (
        ("lease", fcntl.F_SETLEASE, fcntl.F_RDLCK),
        ("getlease", fcntl.F_GETLEASE, 0),
        ("notify", fcntl.F_NOTIFY, fcntl.DN_ACCESS | fcntl.DN_MULTISHOT),
    ):
        target = handle if name != "notify" else os.open(os.path.dirname(path), os.O_RDONLY)
        try:
            fcntl.fcntl(target, command, argument)
        except OSError as error:
            result(name, _error_name(error))
        else:
            result(name, "ok")


def spy(mode, *paths):
    """Try to read each path (a file's content, a folder's listing), then play as a random bot.

    Mode ``log`` prints ``RESULT saw PATH``, ``RESULT listed PATH ENTRIES`` or ``RESULT hidden
    PATH ERRNO`` for each, and the listing of the working directory; mode ``crash`` exits with
    status 3 at the first file it can read or folder that lists anything but the sandbox's
    scaffolding (the referee records a fault: the finding shows in the results).
    """
    for path in paths:
        try:
            if os.path.isdir(path):
                entries = sorted(os.listdir(path))
                result("listed", f"{path} {','.join(entries) or '-'}")
            else:
                with open(path, "rb") as handle:
                    handle.read(64)
                result("saw", path)
        except OSError as error:
            result("hidden", f"{path} {_error_name(error)}")
            continue
        # a folder the sandbox made to hold the bot's own copy lists nothing else
        if mode == "crash" and not (os.path.isdir(path) and entries in ([], [".bots"])):
            os._exit(3)
    result("cwd", ",".join(sorted(os.listdir("."))))
    from ohseven.sdk import Bot, run

    run(Bot, [])


def spin():
    """Burn CPU forever."""
    while True:
        pass


ACTIONS = {
    "spy": spy,
    "lock_hold": lock_hold,
    "lock_probe": lock_probe,
    "file_touch": file_touch,
    "inotify_watch": inotify_watch,
    "lease_notify": lease_notify,
    "spin": spin,
    "user_namespace": user_namespace,
    "exotic": exotic,
    "machine_probes": machine_probes,
    "connect_tcp": connect_tcp,
    "connect_abstract": connect_abstract,
    "read": read,
    "readable": readable,
    "write": write,
    "whoami": whoami,
    "signal": signal_pid,
    "fork_bomb": fork_bomb,
    "memory_hog": memory_hog,
    "big_file": big_file,
    "fill_scratch": fill_scratch,
    "flood": flood,
    "tree": tree,
    "scratch_put": scratch_put,
    "scratch_list": scratch_list,
    "zmq_hello": zmq_hello,
    "imports": imports,
}

if __name__ == "__main__":
    ACTIONS[sys.argv[1]](*sys.argv[2:])
