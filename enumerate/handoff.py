"""Handing arrays from local worker processes to their parent through shared memory.

A worker's result (the entries of a bucket: tens of MB) would otherwise be pickled,
sent through a pipe and unpickled, costing both processes CPU time that the
enumeration needs. Instead the worker writes the arrays into one file of a memory-backed
folder (``/dev/shm``) and returns a small :class:`Handed` descriptor; the parent maps the
file read-only and unlinks it at once, so the memory is freed when the parent drops the
arrays, and nothing is left behind however the parent ends later.

File names start with a prefix that names the parent's PID namespace and process id and
one call of the parent (``irscale-handoff-NAMESPACE-PARENT-CALL-``,
:func:`handoff_prefix`): the parent removes the
files of results it never took (an error or an interrupt in the middle of a map) with
:func:`remove_unclaimed`, and a file left by a parent killed before it could map it is
removed by its workers as they end (:func:`remove_of_parent`, from
:func:`irscale.enumerate.fanout.watch_parent`), or else by the next :func:`remove_stale`
of any process in the same PID namespace
(processes of other containers that share the folder are never judged by their PIDs).
Where the folder is missing,
not memory-backed, or short of room, results go through the pipe as before
(:func:`hand_over` returns the result itself).
"""
from __future__ import annotations

import mmap
import os
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from irscale.enumerate.processes import pid_namespace, process_alive

#: The memory-backed folder results go through (Linux tmpfs).
SHARED_MEMORY = Path("/dev/shm")
PREFIX = "irscale-handoff-"
#: Mapped with its pages at once (MAP_POPULATE): the parent's resident memory counts the
#: result from the moment it takes it, as it did when results came through the pipe.
MAP_FLAGS = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
#: Room a hand-over leaves free in the folder, beyond its own file (bytes).
SPARE_BYTES = 256 << 20


def handoff_prefix() -> str | None:
    """A path prefix for the files of one call's hand-overs (None: use the pipe), in the
    shared-memory folder when it exists, is writable and is memory-backed (tmpfs)."""
    folder = SHARED_MEMORY
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        return None
    try:
        with open("/proc/self/mounts") as fh:
            mounts = {f[1]: f[2] for f in (line.split() for line in fh) if len(f) > 2}
    except OSError:
        return None
    if mounts.get(str(folder)) != "tmpfs":
        return None
    return str(folder / f"{PREFIX}{pid_namespace()}-{os.getpid()}-{uuid.uuid4().hex[:12]}-")


@dataclass
class Handed:
    """Where a worker left a result's arrays: the file, and (name, dtype, length) of
    each array in the order written; ``result`` is the rest of the result (arrays None)."""

    path: str
    layout: list[tuple[str, str, int]]
    result: object


def hand_over(result: object, names: tuple[str, ...], prefix: str | None) -> object:
    """In a worker: write the arrays ``names`` of ``result`` to a new file whose path
    starts with ``prefix`` (:func:`handoff_prefix`) and return a :class:`Handed`
    (``result`` itself when ``prefix`` is None, the folder is short of room, or the
    write fails)."""
    if prefix is None:
        return result
    arrays = [np.ascontiguousarray(getattr(result, n)) for n in names]
    size = sum(a.nbytes for a in arrays)
    try:
        if shutil.disk_usage(os.path.dirname(prefix)).free < size + SPARE_BYTES:
            return result
    except OSError:
        return result
    path = f"{prefix}{os.getpid()}-{uuid.uuid4().hex}"
    try:
        with open(path, "wb") as fh:
            for a in arrays:
                fh.write(memoryview(a.reshape(-1)).cast("B"))
    except OSError:
        _unlink(path)
        return result
    layout = [(n, a.dtype.str, int(a.shape[0])) for n, a in zip(names, arrays)]
    for n in names:
        setattr(result, n, None)
    return Handed(path, layout, result)


def take_back(handed: object) -> object:
    """In the parent: the result a worker handed over, its arrays read-only views of the
    mapped file (already unlinked, its pages resident: :data:`MAP_FLAGS`); anything else
    is returned as it is."""
    if not isinstance(handed, Handed):
        return handed
    try:
        with open(handed.path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            buf = mmap.mmap(fh.fileno(), size, flags=MAP_FLAGS, prot=mmap.PROT_READ) if size else b""
    finally:
        _unlink(handed.path)
    offset = 0
    for name, dtype, length in handed.layout:
        arr = np.frombuffer(buf, dtype=dtype, count=length, offset=offset) if length else np.empty(0, dtype)
        offset += arr.nbytes
        setattr(handed.result, name, arr)
    return handed.result


def remove_unclaimed(prefix: str | None) -> int:
    """In the parent: remove the files of hand-overs under ``prefix`` that it never took;
    returns how many."""
    if prefix is None:
        return 0
    folder, start = os.path.split(prefix)
    return _remove_matching(folder, f"{start}*")


def remove_of_parent(parent: int, folder: str | os.PathLike = SHARED_MEMORY) -> int:
    """Remove the hand-over files of the process ``parent`` (in this PID namespace): a
    worker does so when its parent has died; returns how many."""
    return _remove_matching(folder, f"{PREFIX}{pid_namespace()}-{int(parent)}-*")


def remove_stale(folder: str | os.PathLike = SHARED_MEMORY) -> int:
    """Remove hand-over files in ``folder`` whose parent process, in this PID namespace,
    is gone (killed before mapping them); returns how many."""
    return _remove_matching(folder, f"{PREFIX}{pid_namespace()}-*", _parent_gone)


def _parent_gone(name: str) -> bool:
    try:
        parent = int(name[len(PREFIX):].split("-")[1])
    except (ValueError, IndexError):
        return False
    return not process_alive(parent)


def _remove_matching(folder: str | os.PathLike, pattern: str, condition: Callable[[str], bool] | None = None) -> int:
    """Unlink the files of ``folder`` whose names match the glob ``pattern`` (and satisfy
    ``condition(name)`` where one is given); how many it removed."""
    try:
        found = list(Path(folder).glob(pattern))
    except OSError:
        return 0
    return sum(_unlink(str(p)) for p in found if condition is None or condition(p.name))


def _unlink(path: str) -> int:
    try:
        os.unlink(path)
    except OSError:
        return 0
    return 1
