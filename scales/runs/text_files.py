"""Reading TREC text files: bytes (gzip recognised by its magic bytes, whatever the
file's name), lines, and whitespace-separated fields with pandas' C reader or, for the
usual one-separator layout, pyarrow's multi-threaded reader.

Fields are what trec_eval reads: separated by runs of ASCII white space (space, tab, CR,
vertical tab, form feed; C's ``isspace``), so a non-breaking space or any other Unicode
space is part of a field, and a UTF-8 byte order mark (BOM) at the start of a file is
part of its first field. Files that the fast readers would read otherwise (a BOM, which
both strip; vertical tabs, form feeds and CR without LF, which they do not take as
separators) are read line by line (:func:`text_lines`), as are files in which anything
is wrong: the readers of :mod:`.qrels` and :mod:`.run_files` then either read every line
or report the first problem as ``FILE:LINE: what is wrong`` in a
:class:`~irscale.errors.TrecFormatError` (never a message without the line).
"""
from __future__ import annotations

import io
import math
import os
import re
import stat
import zlib
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import csv

from irscale.errors import IrscaleError, TrecFormatError

#: The UTF-8 byte order mark.
BOM = b"\xef\xbb\xbf"


# -- limits --------------------------------------------------------------------------------
#: Default most bytes of text (after decompression) read from one qrels or run file.
MAX_SIZE = 4 << 30
#: Default longest line, in bytes (TREC lines are short; this only stops files that are
#: not text from being read whole).
MAX_LINE_LENGTH = 1 << 20
#: Default most times a gzip file may inflate, checked once past :data:`RATIO_FLOOR` bytes
#: of text (TREC runs and qrels inflate about 5 times; a compression bomb up to 1000).
MAX_GZIP_RATIO = 100.0
RATIO_FLOOR = 64 << 20
#: The environment variables that raise (or lower) the limits.
SIZE_ENV, LINE_ENV, RATIO_ENV = "IRSCALE_MAX_INPUT_SIZE", "IRSCALE_MAX_LINE_LENGTH", "IRSCALE_MAX_GZIP_RATIO"

_PIECE = 16 << 20            # bytes of text read (or inflated) at a time
_GZ_PIECE = 1 << 20          # bytes of a gzip file read at a time
_GZIP_MAGIC = b"\x1f\x8b"
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([kmgt]?)(?:i?b)?\s*", re.IGNORECASE)


@dataclass(frozen=True)
class InputLimits:
    """Limits on one qrels or run file: ``size`` bytes of text (after decompression),
    ``line_length`` bytes per line, ``gzip_ratio`` times its compressed size for a gzip
    file (past :data:`RATIO_FLOOR` bytes of text)."""

    size: int = MAX_SIZE
    line_length: int = MAX_LINE_LENGTH
    gzip_ratio: float = MAX_GZIP_RATIO


def parse_size(value: int | str, what: str) -> int:
    """A number of bytes: an integer, or a string such as ``8G``, ``512MiB``, ``1.5g``
    (binary units K, M, G, T); ``what`` names it in the error."""
    if isinstance(value, int) and not isinstance(value, bool):
        n = value
    else:
        m = _SIZE.fullmatch(str(value))
        if not m:
            raise IrscaleError(f"{what}: {value!r} is not a size; give bytes, optionally with a unit "
                               f"(K, M, G, T: 8G is 8 GiB)")
        n = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if n < 1:
        raise IrscaleError(f"{what}: {value!r} is not a positive size")
    return n


def _ratio(value: float | str, what: str) -> float:
    try:
        r = float(value)
    except (TypeError, ValueError):
        r = math.nan
    if not r >= 1:
        raise IrscaleError(f"{what}: {value!r} is not a ratio >= 1 (inf: no limit)")
    return r


def input_limits(max_size: int | str | None = None, max_line_length: int | str | None = None,
                 max_gzip_ratio: float | str | None = None) -> InputLimits:
    """The limits of a read: each given one, else its environment variable
    (:data:`SIZE_ENV`, :data:`LINE_ENV`, :data:`RATIO_ENV`), else its default."""
    def pick(given, keyword: str, env: str, default, parse):
        if given is not None:
            return parse(given, keyword)
        value = os.environ.get(env, "").strip()
        return parse(value, env) if value else default

    return InputLimits(pick(max_size, "max_size", SIZE_ENV, MAX_SIZE, parse_size),
                       pick(max_line_length, "max_line_length", LINE_ENV, MAX_LINE_LENGTH, parse_size),
                       pick(max_gzip_ratio, "max_gzip_ratio", RATIO_ENV, MAX_GZIP_RATIO, _ratio))


def show_size(n: float) -> str:
    """``n`` bytes for people: ``4 GiB``, ``1.5 MiB``, ``812 bytes``."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.3g} {unit}"
    return f"{int(n)} bytes"


def _env_size(n: int) -> str:
    """A size of at least ``n`` bytes as the environment variables take it: ``8G``, ``16M``."""
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift:
            return f"{-(-n >> shift)}{unit}"
    return str(n)


def _too_large(path, kind: str, limit: int, needed: int, size: int | None = None) -> TrecFormatError:
    """The error for a file of more than ``limit`` bytes of text (``size`` of them when
    known; ``needed``: a limit to suggest)."""
    raise_to = _env_size(needed)
    what = (f"{show_size(size)}, more than {show_size(limit)}" if size is not None else
            f"more than {show_size(limit)} of text once inflated")
    return TrecFormatError(f"{path}: {what}, irscale's limit on a {kind} file; to read it, raise the limit "
                           f"({SIZE_ENV}={raise_to} in the environment, or max_size={raise_to!r} in Python)")


# -- reading -------------------------------------------------------------------------------
_KINDS = ((stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"), (stat.S_ISFIFO, "pipe (FIFO)"),
          (stat.S_ISSOCK, "socket"))


def not_regular(path: str | os.PathLike, mode: int, kind: str) -> TrecFormatError:
    """The error for a path that is not a regular file (a device, a pipe, a socket), which
    could be read forever or block forever."""
    what = next((name for test, name in _KINDS if test(mode)), "special file")
    return TrecFormatError(f"{path} is a {what}, not a {kind} file: irscale reads regular files only "
                           f"(save the {kind} to a file first)")


def check_regular(path: str | os.PathLike, kind: str) -> None:
    """Raise the error reading ``path`` would give for a missing path, a folder or a file
    that is not a regular one, without opening it."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise TrecFormatError(f"{path}: no such file") from None
    except OSError as e:
        raise TrecFormatError(f"{path}: cannot read ({e.strerror or e})") from None
    if stat.S_ISDIR(mode):
        raise TrecFormatError(f"{path} is a folder, not a {kind} file")
    if not stat.S_ISREG(mode):
        raise not_regular(path, mode, kind)


class _Text:
    """Text read piece by piece, within the limits: too much text, a line too long, NUL
    bytes (binary content) are errors the moment they are read."""

    def __init__(self, path, kind: str, limits: InputLimits):
        self.path, self.kind, self.limits = path, kind, limits
        self.pieces: list[bytes] = []
        self.size = 0
        self.line_start = 0          # offset of the start of the line being read

    def _line_no(self, offset: int) -> int:
        """The number of the line holding byte ``offset`` of the text read so far."""
        count, seen = 1, 0
        for piece in self.pieces:
            count += piece.count(b"\n", 0, max(0, offset - seen))
            seen += len(piece)
        return count

    def add(self, piece: bytes) -> None:
        if not piece:
            return
        limits = self.limits
        if self.size + len(piece) > limits.size:
            raise _too_large(self.path, self.kind, limits.size, 2 * limits.size)
        base = self.size
        self.pieces.append(piece)
        self.size += len(piece)
        nul = piece.find(b"\x00")
        if nul >= 0:
            raise TrecFormatError(f"{self.path}:{self._line_no(base + nul)}: binary content; not a {self.kind} file")
        start, width = self.line_start - base, limits.line_length
        while True:                  # each line must end within `width` bytes of its start
            end = start + width + 1
            nl = piece.rfind(b"\n", max(start, 0), min(end, len(piece)))
            if nl < 0:
                if end <= len(piece):
                    raise_to = _env_size(16 * width)
                    raise TrecFormatError(
                        f"{self.path}:{self._line_no(base + max(start, 0))}: a line longer than "
                        f"{show_size(width)}; not a {self.kind} file? (to read it, raise the limit: "
                        f"{LINE_ENV}={raise_to} in the environment, or max_line_length={raise_to!r} in Python)")
                break
            start = nl + 1
        self.line_start = base + start

    def data(self) -> bytes:
        try:
            return b"".join(self.pieces)
        except MemoryError:
            raise out_of_memory(self.path, self.size) from None


def out_of_memory(path: str | os.PathLike, size: int) -> TrecFormatError:
    """The error for a file whose text does not fit in memory."""
    return TrecFormatError(f"{path}: not enough memory to read its {show_size(size)} of text; free memory, or "
                           f"lower the limit on input files ({SIZE_ENV}) to have such files refused at once")


def _read_plain(f, first: bytes, text: _Text, expected: int) -> None:
    text.add(first)
    read = len(first)
    while piece := f.read(_PIECE):
        read += len(piece)
        _check_growth(f, text.path, read, expected)
        text.add(piece)


def _check_growth(f, path, read: int, expected: int) -> None:
    """Refuse a file that grows while it is read (size ``expected`` when opened; 0: a
    file whose size is not known, such as those of /proc, read within the size limit)."""
    if expected and (read > expected or os.fstat(f.fileno()).st_size > expected):
        raise TrecFormatError(f"{path}: the file grows while it is read (is something still writing it?); "
                              f"read it once it is complete")


def _inflate(f, first: bytes, text: _Text, expected: int) -> None:
    """Inflate the gzip members of ``f`` (``first``: its first bytes) into ``text``, a
    piece at a time, refusing data that inflates more than the ratio limit."""
    path, ratio = text.path, text.limits.gzip_ratio
    read, pending = len(first), first
    inflate = zlib.decompressobj(wbits=31)
    member = True                                    # inside a gzip member
    while True:
        if not pending:
            pending = f.read(_GZ_PIECE)
            read += len(pending)
            _check_growth(f, path, read, expected)
            if not pending:                          # the end of the file
                if member:
                    text.add(inflate.flush())        # the few bytes zlib may hold back (a match being copied)
                    if not inflate.eof:
                        raise TrecFormatError(f"{path}: corrupt gzip file (it ends before the end-of-stream "
                                              f"marker)")
                return
        if not member:                               # between members: NUL padding, a member, or garbage
            pending = pending.lstrip(b"\x00")
            if not pending:
                continue
            if len(pending) < 2:
                more = f.read(_GZ_PIECE)
                read += len(more)
                _check_growth(f, path, read, expected)
                pending += more
            if not pending.startswith(_GZIP_MAGIC):
                raise TrecFormatError(f"{path}: corrupt gzip file (data after the end of its gzip stream)")
            inflate, member = zlib.decompressobj(wbits=31), True
        try:
            out = inflate.decompress(pending, _PIECE)
        except zlib.error as e:
            raise TrecFormatError(f"{path}: corrupt gzip file ({e})") from None
        pending = inflate.unconsumed_tail
        text.add(out)
        used = read - len(pending) - len(inflate.unused_data)
        if text.size > RATIO_FLOOR and text.size > ratio * max(used, 1):
            raise TrecFormatError(f"{path}: gzip data that inflates more than {ratio:g} times ({show_size(used)} "
                                  f"to {show_size(text.size)} so far): a compression bomb, not a {text.kind} file? "
                                  f"(to read it, raise the limit: {RATIO_ENV}={10 * ratio:g} in the environment, "
                                  f"or max_gzip_ratio={10 * ratio:g} in Python)")
        if inflate.eof:
            pending, member = inflate.unused_data, False


def read_bytes(path: str | os.PathLike, kind: str, limits: InputLimits | None = None) -> bytes:
    """Content of a (possibly gzipped) text file, read in pieces within ``limits``
    (:func:`input_limits` when None), with user errors as TrecFormatError: a missing path,
    a folder, anything but a regular file (a device, a pipe: refused before reading, never
    read forever nor waited on), too much text, a line too long, binary content, a gzip
    file that is corrupt or inflates beyond the ratio limit."""
    limits = limits or input_limits()
    check_regular(path, kind)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))   # never waits on a FIFO put in its place
    except OSError as e:
        raise TrecFormatError(f"{path}: cannot read ({e.strerror or e})") from None
    text = _Text(path, kind, limits)
    with open(fd, "rb", buffering=0) as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise not_regular(path, st.st_mode, kind)
        try:
            first = f.read(_GZ_PIECE)
            if first[:2] == _GZIP_MAGIC:
                _inflate(f, first, text, st.st_size)
            elif st.st_size > limits.size:
                raise _too_large(path, kind, limits.size, st.st_size, st.st_size)
            else:
                _read_plain(f, first, text, st.st_size)
        except OSError as e:
            raise TrecFormatError(f"{path}: cannot read ({e.strerror or e})") from None
        except MemoryError:
            raise out_of_memory(path, text.size) from None
    return text.data()


def text_lines(path: str | os.PathLike, data: bytes, kind: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of the non-blank lines, split as trec_eval splits them (on
    ASCII white space only; a BOM stays in the first field); binary content and text
    that is not UTF-8 are errors naming the line."""
    for no, raw in enumerate(data.split(b"\n"), start=1):
        if b"\x00" in raw:
            raise TrecFormatError(f"{path}:{no}: binary content; not a {kind} file")
        fields = raw.split()             # bytes.split(): ASCII white space, as C's isspace
        if not fields:
            continue
        try:
            decoded = [f.decode("utf-8") for f in fields]
        except UnicodeDecodeError:
            raise TrecFormatError(f"{path}:{no}: not UTF-8 text; not a {kind} file") from None
        yield no, decoded


def read_line_by_line(data: bytes) -> bool:
    """Whether the fast readers would read ``data`` otherwise than trec_eval, so that it
    must be read by :func:`text_lines`: a BOM (which they strip), vertical tabs or form
    feeds (which they do not take as separators), a CR not followed by LF (a line end to
    pandas, a separator to trec_eval)."""
    if data.startswith(BOM) or b"\x0b" in data or b"\x0c" in data:
        return True
    return b"\r" in data and data.count(b"\r") != data.count(b"\r\n")


def bom_warning(path: str | os.PathLike, first_field: str, what: str) -> str:
    """The warning given for a file that starts with a BOM (kept, as trec_eval keeps it)."""
    return (f"{path}:1: the file starts with a UTF-8 byte order mark (BOM), which irscale keeps as trec_eval "
            f"does: the first {what} is {first_field!r}, not {first_field.removeprefix(chr(0xFEFF))!r}; save the "
            f"file without a BOM to read that line as the others")


def check_text(path: str | os.PathLike, data: bytes, kind: str) -> None:
    if b"\x00" in data:
        no = data[: data.index(b"\x00")].count(b"\n") + 1
        raise TrecFormatError(f"{path}:{no}: binary content; not a {kind} file")
    if not data.strip():
        raise TrecFormatError(f"{path}: empty {kind} file")


def read_fields(data: bytes, columns: Sequence[str], dtypes: dict[str, type], extra: str = "refuse"
                ) -> pd.DataFrame:
    """Whitespace-separated fields (any run of spaces and tabs), with pandas' C reader.

    ``extra``: what lines with more fields than ``columns`` get: ``"ignore"`` (the fields
    after the last column are dropped, as trec_eval drops what follows a run's tag) or
    ``"refuse"`` (ValueError, as trec_eval refuses such qrels lines). Without either,
    pandas would silently take the first field of such a file as its index and shift the
    others."""
    names = list(columns)
    if extra == "ignore":
        return pd.read_csv(io.BytesIO(data), sep=r"\s+", header=None, names=names, usecols=range(len(names)),
                           dtype=dtypes, na_filter=False, engine="c", skip_blank_lines=True, encoding="utf-8")
    df = pd.read_csv(io.BytesIO(data), sep=r"\s+", header=None, names=[*names, "_extra"], index_col=False,
                     dtype={**dtypes, "_extra": object}, na_filter=False, engine="c", skip_blank_lines=True,
                     encoding="utf-8")
    if (df["_extra"] != "").any():
        raise ValueError("a line has more fields than columns")
    return df.drop(columns="_extra")


def delimited_table(data: bytes, columns: Sequence[str], float_columns: Collection[str] = (),
                    extra: bool = False) -> pa.Table | None:
    """Fast path for the usual layout, one tab (or one space) between fields: a pyarrow
    table (multi-threaded reader, 5x faster than pandas on TREC runs), or None when the
    file is laid out otherwise and must be read by :func:`read_fields`. Any field that is empty
    or holds whitespace (runs of separators, trailing blanks, CR line ends) sends the file
    to the general reader, so both paths always read the same fields. With ``extra``, the
    fields after the last column are dropped when every line has as many as the first
    (other files go to the general reader)."""
    head = data[:data.find(b"\n")] if b"\n" in data else data
    delimiter = "\t" if b"\t" in head else " "
    if (b" " if delimiter == "\t" else b"\t") in data or b"\r" in data or read_line_by_line(data):
        return None   # mixed separators or CR line ends: a field would hold whitespace
    names = list(columns)
    if extra:
        names += [f"_extra{i}" for i in range(max(0, len(head.split(delimiter.encode())) - len(names)))]
    types = {c: (pa.float64() if c in float_columns else pa.string()) for c in names}
    # pyarrow's own SIGINT handling (a handler swapped in for the read, the signal sent again
    # after it) now and then loses a Ctrl-C; without it Python's handler takes the signal and
    # KeyboardInterrupt comes when the read (a few milliseconds) returns
    pa.lib.enable_signal_handlers(False)
    try:
        table = csv.read_csv(io.BytesIO(data),
                             read_options=csv.ReadOptions(column_names=names),
                             parse_options=csv.ParseOptions(delimiter=delimiter, quote_char=False,
                                                            double_quote=False, ignore_empty_lines=True),
                             convert_options=csv.ConvertOptions(column_types=types, strings_can_be_null=False,
                                                                quoted_strings_can_be_null=False, null_values=[]))
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
        return None
    finally:
        pa.lib.enable_signal_handlers(True)
    table = table.select(list(columns))
    strings = [c for c in columns if c not in float_columns]
    if any(pc.min(pc.binary_length(table[c])).as_py() == 0 for c in strings if table.num_rows):
        return None
    return table
