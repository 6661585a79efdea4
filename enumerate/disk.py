"""What a failed write means: a full disk (ENOSPC, EDQUOT), a file-size limit (EFBIG,
RLIMIT_FSIZE), or something else.

:func:`disk_error` turns the error of a failed write into the
:class:`~irscale.errors.DiskFullError` that it means (saying where, and how much is
free), or None; :func:`full_disk_error` says a full disk; :func:`write_text` writes a
small file atomically, with that translation. The split enumerator's checkpoints and the
store's builds use them.
"""
from __future__ import annotations

import errno
import os
import re
import resource
import shutil
from pathlib import Path

from irscale.errors import DiskFullError

#: A write that failed without an errno (numpy's "N requested and M written", HDF5's
#: "file write failed") is taken as a full disk when less than this is free.
LOW_FREE_BYTES = 64 << 20
_WRITE_FAILED = re.compile(r"requested and \d+ written|write failed|can't write|unable to extend|short write|"
                           r"no space left|file too large|disk quota", re.IGNORECASE)
_ERRNO_IN_TEXT = re.compile(r"errno = (\d+)")
_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


def _free_bytes(folder: Path) -> int | None:
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def _file_size_limit() -> int | None:
    """The soft RLIMIT_FSIZE of this process in bytes (None: unlimited)."""
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return None if soft == resource.RLIM_INFINITY else int(soft)


def disk_error(exc: BaseException, path: str | os.PathLike,
               folder: str | os.PathLike | None = None) -> DiskFullError | None:
    """The :class:`~irscale.errors.DiskFullError` that the failed write of ``path`` means,
    or None when ``exc`` is not about a full disk or a file-size limit.

    Recognised: an OSError with errno ENOSPC or EDQUOT (disk full) or EFBIG (file too
    large, RLIMIT_FSIZE); HDF5's RuntimeError/OSError texts carrying those errnos; and
    short writes without an errno (numpy's "783696 requested and 271328 written", "file
    write failed"), which count as a full disk when the folder has less than
    :data:`LOW_FREE_BYTES` free, or as a file-size limit when ``path`` reached it.
    ``folder``: where to measure the free space (default: ``path``'s folder). Call it
    before removing the file that failed."""
    if not isinstance(exc, (OSError, RuntimeError, ValueError)):
        return None
    path = Path(path)
    code = exc.errno if isinstance(exc, OSError) else None
    text = str(exc)
    if code is None:
        m = _ERRNO_IN_TEXT.search(text)
        code = int(m.group(1)) if m else None
    limit = _file_size_limit()
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else \
        os.strerror(code) if code is not None else text[:120]
    if code is None:
        if not _WRITE_FAILED.search(text):
            return None
        free = _free_bytes(_folder_of(Path(folder) if folder is not None else path))
        try:
            written = path.stat().st_size
        except OSError:
            written = 0
        if limit is not None and written >= limit - (1 << 16):
            code = errno.EFBIG
        elif free is not None and free < LOW_FREE_BYTES:
            code = errno.ENOSPC
        else:
            return None
    if code == errno.EFBIG:
        said = f" (at most {_amount(limit)} per file, ulimit -f)" if limit is not None else ""
        return DiskFullError(f"file size limit reached writing {path}: file too large{said}")
    if code in _FULL:
        return full_disk_error(path, folder, reason)
    return None


def _folder_of(path: Path) -> Path:
    """The nearest existing folder at or above ``path`` (absolute)."""
    folder = Path(os.path.abspath(path))
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    return folder


def _amount(n: int) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e8 else f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n} bytes"


def full_disk_error(path: str | os.PathLike, folder: str | os.PathLike | None = None,
                    reason: str = "") -> DiskFullError:
    """``disk full while writing PATH (REASON; 0.00 GB free on FOLDER)``; FOLDER defaults
    to ``path``'s folder, REASON is the system's text (``No space left on device``)."""
    where = _folder_of(Path(folder) if folder is not None else Path(path).parent)
    free = _free_bytes(where)
    said = f"{_amount(free)} free" if free is not None else "free space unknown"
    return DiskFullError(f"disk full while writing {path} ({reason + '; ' if reason else ''}{said} on {where})")


def write_text(path: Path, text: str) -> None:
    """Write a small checkpoint file atomically (temporary name + rename), translating a
    full disk into DiskFullError and leaving no temporary file."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    except BaseException as e:
        full = disk_error(e, tmp, path.parent)
        tmp.unlink(missing_ok=True)
        if full is not None:
            raise full from None
        raise
