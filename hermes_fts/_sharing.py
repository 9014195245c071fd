"""Other processes on the same store: whether one holds the write lock or has
the store open at all (so a fill can skip its pauses when nobody else is
there), and one optimize-storage run per store at a time; and other threads
on the same ``SessionStore``: one of them at a time on its connection."""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import wraps
from typing import Any

from ._sqlite import StoreError

__all__ = [
    "RUN_LOCK_SUFFIX",
    "RunBusy",
    "one_thread_at_a_time",
    "open_elsewhere",
    "opened_elsewhere",
    "pause_when_shared",
    "run_alive",
    "run_held",
    "run_lock",
    "run_under_way",
    "write_lock_held",
]


def write_lock_held(path: str | os.PathLike[str]) -> bool:
    """Whether another connection holds ``path``'s write lock right now (a write
    would wait for it); False when there is no such file or it cannot be opened to ask."""
    if not os.path.isfile(path):
        return False
    try:
        conn = sqlite3.connect(os.fspath(path), timeout=0, isolation_level=None)
    except sqlite3.Error:
        return False
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
        return False
    except sqlite3.Error as exc:  # not a database, read-only, ...: the open says why
        return "locked" in str(exc).lower() or "busy" in str(exc).lower()
    finally:
        conn.close()


def opened_elsewhere(path: str | os.PathLike[str]) -> bool:
    """Whether a process other than this one may have the WAL store ``path`` open:
    ``open_elsewhere``, and True wherever it cannot tell."""
    return open_elsewhere(path) is not False


def open_elsewhere(path: str | os.PathLike[str]) -> bool | None:
    """Whether a process other than this one has the WAL store ``path`` open; None
    where it cannot tell (another system, no ``-shm``, a list it cannot read).

    Every connection to a WAL store holds a read lock on its ``-shm`` file
    (byte 128, SQLite's "dead man switch") for as long as it is open, and
    Linux lists every lock in /proc/locks.
    """
    if sys.platform != "linux":
        return None
    try:
        shm = os.stat(f"{os.fspath(path)}-shm")
        with open("/proc/locks", encoding="ascii", errors="replace") as table:
            lines = table.read().splitlines()
    except OSError:
        return None
    inode = f"{os.major(shm.st_dev):02x}:{os.minor(shm.st_dev):02x}:{shm.st_ino}"
    holders = set()
    for line in lines:  # "6: POSIX  ADVISORY  READ 5876 fe:00:2146381 128 128"
        fields = line.split()
        if inode in fields[1:]:
            holders.add(fields[fields.index(inode) - 1])
    return holders != {str(os.getpid())}


def pause_when_shared(
    path: str | os.PathLike[str], sleep: Callable[[float], None] = time.sleep
) -> Callable[[float], None]:
    """A pause between a fill's chunks (``maintain.Sleep``) taken only while another
    process may have the store open (``opened_elsewhere``, asked at each pause):
    with nobody to let in, a fill does not wait.  Only for a process that holds
    no other connection to the store, such as the ``hermes-fts`` command, since
    connections of this one are not told apart from its own."""

    def pause(seconds: float) -> None:
        if opened_elsewhere(path):
            sleep(seconds)

    return pause


# --------------------------------------------------------------------------
# One optimize-storage run per store

RUN_LOCK_SUFFIX = "-hermes-fts-run"
# store → the thread of this process holding its run lock, and what it runs
_runs_held: dict[str, tuple[int, str]] = {}
OPTIMIZE_RUN = "optimize-storage run"


class RunBusy(StoreError):
    """Another process is running optimize-storage on this store; ``pid`` names it
    (None when it could not be read)."""

    def __init__(self, message: str, pid: int | None) -> None:
        super().__init__(message)
        self.pid = pid


@contextmanager
def run_lock(path: str | os.PathLike[str], what: str = OPTIMIZE_RUN) -> Iterator[None]:
    """Hold the store's optimize-storage lock while the block runs; raises RunBusy
    at once when another process holds it.  ``what`` names the holder in the
    refusal another gets (a sync holding the reserve takes the lock too).

    An ``flock`` on a file beside the store: the kernel drops it with the
    process, so a run that crashed or was killed never blocks the next.  A
    process that holds it already (the command, then the store's own run) goes
    on; where no lock file can be made (a folder it cannot write, no fcntl)
    the run goes on too, and the write checks say what stops it.
    """
    key = os.path.realpath(os.fspath(path))
    holder = _runs_held.get(key)
    if holder is not None and holder[0] != threading.get_ident():
        # flock does not tell two threads of one process apart.
        message = f"another {holder[1]} (process {os.getpid()}) is working on {key}"
        raise RunBusy(f"{message}; wait for it to end", os.getpid())
    fd = None if holder is not None else _take_run_lock(key + RUN_LOCK_SUFFIX, key, what)
    if fd is None:
        yield
        return
    _runs_held[key] = (threading.get_ident(), what)
    try:
        yield
    finally:
        del _runs_held[key]
        try:  # removed while still held, so a waiting run re-checks the inode
            os.remove(key + RUN_LOCK_SUFFIX)
        except OSError:
            pass
        os.close(fd)


def _flock_holders(lock: str) -> list[str] | None:
    """The ids of the processes holding an flock on ``lock``, read in /proc/locks
    without taking it: a reader holding it even a moment would refuse a run
    starting then.  [] without the file; None where it cannot be told (not Linux)."""
    if sys.platform != "linux":
        return None
    try:
        st = os.stat(lock)
    except FileNotFoundError:
        return []
    except OSError:
        return None
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as table:
            lines = table.read().splitlines()
    except OSError:
        return None
    inode = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    holders = []
    for line in lines:  # "3: FLOCK  ADVISORY  WRITE 5876 fe:00:2146381 0 EOF"
        fields = line.split()
        if "FLOCK" in fields and inode in fields[1:]:
            holders.append(fields[fields.index(inode) - 1])
    return holders


def run_under_way(path: str | os.PathLike[str]) -> str | None:
    """Which other process holds the store's run lock now (``another optimize-storage
    run (process N)``), without taking the lock.  None when no one does, or where
    it cannot be told (not Linux)."""
    lock = os.path.realpath(os.fspath(path)) + RUN_LOCK_SUFFIX
    others = [pid for pid in _flock_holders(lock) or () if pid != str(os.getpid())]
    if not others:
        return None
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return None
    try:
        _pid, what = _lock_holder(fd)
    finally:
        os.close(fd)
    return f"another {what} (process {others[0]})"


def run_held(path: str | os.PathLike[str]) -> bool:
    """Whether this thread holds the store's run lock (a run, or a sync, under way)."""
    holder = _runs_held.get(os.path.realpath(os.fspath(path)))
    return holder is not None and holder[0] == threading.get_ident()


def run_alive(path: str | os.PathLike[str]) -> bool:
    """Whether a live process (this one included) holds the store's run lock: a run, or
    a sync holding its room.  Asked without making the lock file, for readers: in
    /proc/locks on Linux, elsewhere by a shared lock let go at once; True where it
    cannot be told (no flock), so nothing of a live run is called left over."""
    key = os.path.realpath(os.fspath(path))
    if key in _runs_held:
        return True
    holders = _flock_holders(key + RUN_LOCK_SUFFIX)
    if holders is not None:
        return bool(holders)
    try:
        import fcntl
    except ImportError:
        return True
    try:
        fd = os.open(key + RUN_LOCK_SUFFIX, os.O_RDONLY)
    except FileNotFoundError:  # every run and sync holds one while its room exists
        return False
    except OSError:
        return True
    try:  # shared and let go at once: a run starting in that moment is refused
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def _take_run_lock(lock: str, store: str, what: str) -> int | None:
    """The descriptor holding ``lock``, None where none can be made; raises RunBusy."""
    try:
        import fcntl
    except ImportError:  # Windows: no flock
        return None
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except PermissionError:  # another user's file, left by a killed run
            try:
                fd = os.open(lock, os.O_RDONLY)
            except OSError:
                return None
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid, held_by = _lock_holder(fd)
            os.close(fd)
            who = f"process {pid}" if pid else "another process"
            resumed = " (a run stopped half way is resumed by the next one)"
            raise RunBusy(
                f"another {held_by} ({who}) is working on {store}; wait for it to end"
                + (resumed if held_by == OPTIMIZE_RUN else ""),
                pid,
            ) from None
        except OSError:  # no flock on this file system: go on unlocked
            os.close(fd)
            return None
        try:  # the file may have been removed by the run that just ended
            same = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except OSError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n{what}\n".encode())
    except OSError:  # opened read-only: the lock holds all the same
        pass
    return fd


def _lock_holder(fd: int) -> tuple[int | None, str]:
    """The process id and the kind of run the lock file names (an older file: a run)."""
    try:
        lines = os.pread(fd, 128, 0).decode("ascii", "replace").split("\n")
    except OSError:
        return None, OPTIMIZE_RUN
    pid = lines[0].strip()
    what = lines[1].strip() if len(lines) > 1 and lines[1].strip() else OPTIMIZE_RUN
    return (int(pid) if pid.isdigit() else None), what


def one_thread_at_a_time(cls: type, also: Sequence[str] = ()) -> None:
    """Every public method of ``cls`` and of its bases, and those named in ``also``,
    run under the instance's ``_lock`` (an RLock, set before its first call).  A
    store has one connection: two threads' transactions on it ran into each other
    ("cannot start a transaction within a transaction"), and a write failed while
    another thread searched."""
    for klass in reversed(cls.__mro__[:-1]):  # the subclass's own methods win
        for name, method in vars(klass).items():
            if isinstance(method, types.FunctionType) and (
                not name.startswith("_") or name in also
            ):
                setattr(cls, name, _under_lock(method))


def _under_lock(method: Callable[..., Any]) -> Callable[..., Any]:
    @wraps(method)
    def locked(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return locked
