"""Reading TREC text files: bytes (gzip recognised by its magic bytes, whatever the
file's name), lines, and whitespace-separated fields with pandas' C reader or, for the
usual one-separator layout, pyarrow's multi-threaded reader.

When anything is wrong with a file, the readers of :mod:`.qrels` and :mod:`.run_files`
read it again line by line (:func:`text_lines`) to report the first problem as
``FILE:LINE: what is wrong`` in a :class:`~irscale.errors.TrecFormatError`.
"""
from __future__ import annotations

import gzip
import io
import os
import zlib
from collections.abc import Collection, Iterable, Iterator, Sequence
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import csv

from irscale.errors import TrecFormatError


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
    """(line number, fields) of the non-blank lines; binary content is an error."""
    for no, raw in enumerate(data.split(b"\n"), start=1):
        if b"\x00" in raw:
            raise TrecFormatError(f"{path}:{no}: binary content; not a {kind} file")
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise TrecFormatError(f"{path}:{no}: not UTF-8 text; not a {kind} file") from None
        fields = line.split()
        if fields:
            yield no, fields


def check_text(path: str | os.PathLike, data: bytes, kind: str) -> None:
    if b"\x00" in data:
        no = data[: data.index(b"\x00")].count(b"\n") + 1
        raise TrecFormatError(f"{path}:{no}: binary content; not a {kind} file")
    if not data.strip():
        raise TrecFormatError(f"{path}: empty {kind} file")


def read_fields(data: bytes, columns: Iterable[str], dtypes: dict[str, type]) -> pd.DataFrame:
    """Whitespace-separated fields (any run of spaces and tabs), with pandas' C reader."""
    return pd.read_csv(io.BytesIO(data), sep=r"\s+", header=None, names=list(columns), dtype=dtypes,
                       na_filter=False, engine="c", skip_blank_lines=True, encoding="utf-8")


def delimited_table(data: bytes, columns: Sequence[str], float_columns: Collection[str] = ()) -> pa.Table | None:
    """Fast path for the usual layout, one tab (or one space) between fields: a pyarrow
    table (multi-threaded reader, 5x faster than pandas on TREC runs), or None when the
    file is laid out otherwise and must be read by :func:`read_fields`. Any field that is empty
    or holds whitespace (runs of separators, trailing blanks, CR line ends) sends the file
    to the general reader, so both paths always read the same fields."""
    head = data[:data.find(b"\n")] if b"\n" in data else data
    delimiter = "\t" if b"\t" in head else " "
    if (b" " if delimiter == "\t" else b"\t") in data or b"\r" in data:
        return None   # mixed separators or CR line ends: a field would hold whitespace
    types = {c: (pa.float64() if c in float_columns else pa.string()) for c in columns}
    try:
        table = csv.read_csv(io.BytesIO(data),
                             read_options=csv.ReadOptions(column_names=list(columns)),
                             parse_options=csv.ParseOptions(delimiter=delimiter, quote_char=False,
                                                            double_quote=False, ignore_empty_lines=True),
                             convert_options=csv.ConvertOptions(column_types=types, strings_can_be_null=False,
                                                                quoted_strings_can_be_null=False, null_values=[]))
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
        return None
    strings = [c for c in columns if c not in float_columns]
    if any(pc.min(pc.binary_length(table[c])).as_py() == 0 for c in strings if table.num_rows):
        return None
    return table
