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

import gzip
import io
import os
import zlib
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import csv

from irscale.errors import TrecFormatError

#: The UTF-8 byte order mark.
BOM = b"\xef\xbb\xbf"


def read_bytes(path: str | os.PathLike, kind: str) -> bytes:
    """Content of a (possibly gzipped) text file, with user errors as TrecFormatError."""
    path = Path(path)
    if not path.exists():
        raise TrecFormatError(f"{path}: no such file")
    if path.is_dir():
        raise TrecFormatError(f"{path} is a folder, not a {kind} file")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise TrecFormatError(f"{path}: cannot read ({e.strerror or e})") from None
    if data[:2] == b"\x1f\x8b":
        try:
            inflate = zlib.decompressobj(wbits=31)
            text = inflate.decompress(data)
            # several gzip members (concatenated files): let gzip read them all
            data = gzip.decompress(data) if inflate.unused_data or not inflate.eof else text
        except (OSError, EOFError, zlib.error) as e:
            raise TrecFormatError(f"{path}: corrupt gzip file ({e})") from None
    return data


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
    try:
        table = csv.read_csv(io.BytesIO(data),
                             read_options=csv.ReadOptions(column_names=names),
                             parse_options=csv.ParseOptions(delimiter=delimiter, quote_char=False,
                                                            double_quote=False, ignore_empty_lines=True),
                             convert_options=csv.ConvertOptions(column_types=types, strings_can_be_null=False,
                                                                quoted_strings_can_be_null=False, null_values=[]))
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
        return None
    table = table.select(list(columns))
    strings = [c for c in columns if c not in float_columns]
    if any(pc.min(pc.binary_length(table[c])).as_py() == 0 for c in strings if table.num_rows):
        return None
    return table
