"""The table format (version 4).

A store is a folder of HDF5 files, one per table (:mod:`irscale.store.folder`); a packed
store (:mod:`irscale.store.pack`) is one HDF5 file whose root has the attributes
format="irscale-tables", format_version=4, generator, generator_version, created, and
whose groups ``/tables/<name>`` are tables (``<name>``: the canonical measure name,
followed for tables of one recall-base vector by it: ``nDCG(b=2,gains=(0,1,2))@10
rb=(3,10)``). A table is the same in both: the root of its file, or a group.

Every file is of the latest HDF5 file format (checksummed superblock and object headers)
and its text attributes are fixed-length strings (held in the checksummed object header).
A table has the attributes measure, family, params (JSON), rel (JSON), n, rb_dependent,
layout, n_entries, n_runs, n_distinct, distinct_by_rb (JSON), rb_counts (JSON),
implicit, tie_method, error_bound, min_gap, min_gap_exact, redecided,
generator_version, created, build_seconds, format_version, digests, checksum, complete,
and the contiguous datasets of its layout (:mod:`irscale.scales.tables.layouts`).
``digests`` is the JSON object ``{dataset: [dtype, shape, sha256]}`` of every dataset
(its bytes little-endian, in C order); ``checksum`` is the sha256 of
:func:`canonical_attrs`, every attribute but :data:`UNCOVERED` (when and by what it was
written), the checksum and ``complete``: it covers every dataset through its digest and
every attribute that decides an answer, and a rebuild gives the same checksum. What a
reader checks before it touches data: :mod:`irscale.store.reader`.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from collections.abc import Iterator, Mapping

import numpy as np

FORMAT_NAME = "irscale-tables"
FORMAT_VERSION = 4
#: Attributes the checksum does not cover: when and by which irscale a table was written.
UNCOVERED = frozenset({"created", "build_seconds", "generator_version"})
_NOT_HASHED = UNCOVERED | {"checksum", "complete"}
#: Tables of fewer bytes are verified whole (every digest) when a reader opens them.
VERIFY_ON_OPEN_BYTES = 64 << 20


def table_name(measure: str, table_rb: tuple | None = None) -> str:
    """The name of a table: the canonical measure name, and for tables of one recall-base
    vector that vector (``nDCG(b=2,gains=(0,1,2))@10 rb=(3,10)``)."""
    return str(measure) if table_rb is None else f"{measure} rb=({','.join(str(int(c)) for c in table_rb)})"


def table_path(measure: str, table_rb: tuple | None = None) -> str:
    """HDF5 path of a table in a packed file."""
    return f"/tables/{table_name(measure, table_rb)}"


def new_checksum() -> hashlib._Hash:
    """The hash of table checksums and dataset digests (sha256)."""
    return hashlib.sha256()


def _tagged(value: object) -> list:
    """An attribute value with its type, in a form that JSON keeps exactly."""
    if isinstance(value, bool):
        return ["bool", value]
    if isinstance(value, int):
        return ["int", str(value)]
    if isinstance(value, float):
        return ["float", value.hex() if math.isfinite(value) else repr(value)]
    return ["str", value] if isinstance(value, str) else [type(value).__name__, repr(value)]


def canonical_attrs(attrs: dict) -> bytes:
    """What the checksum is the sha256 of: the attributes (decoded) but those not hashed,
    sorted by name, each with its type."""
    items = [[k, *_tagged(attrs[k])] for k in sorted(attrs) if k not in _NOT_HASHED]
    return json.dumps(items, ensure_ascii=True, separators=(",", ":")).encode()


def table_checksum(attrs: dict) -> str:
    """The checksum of a table from its decoded attributes."""
    h = new_checksum()
    h.update(b"irscale-table-v4\0")
    h.update(canonical_attrs(attrs))
    return h.hexdigest()


def decode_attrs(attrs: Mapping) -> dict:
    """HDF5 attributes as Python values (bytes decoded, numpy scalars as Python scalars)."""
    return {k: v.decode() if isinstance(v, bytes) else v.item() if isinstance(v, np.generic) else v
            for k, v in attrs.items()}


def digest_entry(dtype: np.dtype, shape: tuple, hexdigest: str) -> list:
    """What ``digests`` records of one dataset: [dtype, shape, sha256]."""
    return [np.dtype(dtype).str, [int(s) for s in shape], hexdigest]


def little_endian_bytes(arr: np.ndarray) -> memoryview:
    """The bytes a digest covers: the array little-endian, in C order (a view of the
    array's memory when it is already so, not a copy)."""
    return memoryview(np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).reshape(-1)).cast("B")


#: Integers past int64 (the run counts and K of bounded scales, up to 2^1000 and more) are
#: stored as decimal text; readers take either.
_INT64 = 2 ** 63 - 1
_DECIMAL = re.compile(r"[0-9]{1,4000}")


def int_attr(value: int) -> int | str:
    """An integer as an HDF5 attribute: itself within int64, else its decimal text."""
    value = int(value)
    return value if -_INT64 <= value <= _INT64 else str(value)


_REAL = (int, float)


def _get(attrs: Mapping, key: str, kinds: tuple, default: object = ...) -> object:
    v = attrs.get(key, default)
    if not isinstance(v, kinds) or isinstance(v, bool) and bool not in kinds:
        raise ValueError(f"attr {key} is {v!r}")
    return v


def _int(attrs: Mapping, key: str, default: object = ...) -> int:
    v = attrs.get(key, default)
    return int(v) if isinstance(v, str) and _DECIMAL.fullmatch(v) else _get(attrs, key, (int,), default)


def _json(attrs: Mapping, key: str, default: str, kind: type | tuple) -> object:
    value = json.loads(_get(attrs, key, (str,), default))
    if not isinstance(value, kind):
        raise ValueError(f"attr {key} is {attrs.get(key)!r}")
    return value


def _ints(values: object, key: str) -> tuple[int, ...]:
    if not isinstance(values, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise ValueError(f"attr {key} is {values!r}")
    return tuple(values)


@dataclasses.dataclass(frozen=True)
class TableInfo(Mapping):
    """The metadata of one stored table, decoded and type-checked once
    (:meth:`from_attrs`), shared by the reader's listing, ``irscale info`` and the
    service. Its fields are typed (``params`` a dict, ``rel``, ``distinct_by_rb`` and
    ``rb_counts`` tuples, run counts Python integers of any size, ``build_seconds`` None
    when unknown); ``attrs`` holds every attribute as stored. As a read-only mapping it
    gives the fields and the other attributes by name (``info["n_runs"]``)."""

    name: str
    measure: str
    rb_counts: tuple[int, ...] | None
    family: str
    params: dict
    rel: tuple[int, ...]
    n: int
    layout: str
    n_entries: int
    n_runs: int
    n_distinct: int
    distinct_by_rb: tuple[int, ...]
    implicit: bool
    tie_method: str
    error_bound: float
    min_gap: float
    min_gap_exact: str
    redecided: int
    format_version: int
    generator_version: str
    created: str
    build_seconds: float | None
    checksum: str
    path: str
    attrs: Mapping = dataclasses.field(repr=False, compare=False)

    @classmethod
    def from_attrs(cls, attrs: Mapping, path: str = "") -> TableInfo:
        """The metadata of a table from its decoded attributes (:func:`decode_attrs`);
        raises ValueError naming the first attribute that is missing or of a wrong type
        (whether the values are right is checked when the table is opened)."""
        counts = _json(attrs, "rb_counts", "null", (list, type(None)))
        rb_counts = None if counts is None else _ints(counts, "rb_counts")
        seconds = float(_get(attrs, "build_seconds", _REAL, -1.0))
        measure = _get(attrs, "measure", (str,))
        layout = attrs.get("layout") or ("implicit" if attrs.get("implicit") else "entries")
        return cls(
            name=table_name(measure, rb_counts), measure=measure, rb_counts=rb_counts,
            family=_get(attrs, "family", (str,), measure.split("(")[0].split("@")[0]),
            params=_json(attrs, "params", "{}", dict), rel=_ints(_json(attrs, "rel", "[]", list), "rel"),
            n=_int(attrs, "n"), layout=_get({"layout": layout}, "layout", (str,)), n_entries=_int(attrs, "n_entries"),
            n_runs=_int(attrs, "n_runs"), n_distinct=_int(attrs, "n_distinct"),
            distinct_by_rb=_ints(_json(attrs, "distinct_by_rb", "[]", list), "distinct_by_rb"),
            implicit=bool(attrs.get("implicit", False)), tie_method=_get(attrs, "tie_method", (str,)),
            error_bound=float(_get(attrs, "error_bound", _REAL)), min_gap=float(_get(attrs, "min_gap", _REAL)),
            min_gap_exact=str(attrs.get("min_gap_exact", "")), redecided=_int(attrs, "redecided", 0),
            format_version=_int(attrs, "format_version"), generator_version=_get(attrs, "generator_version", (str,)),
            created=_get(attrs, "created", (str,)), build_seconds=seconds if seconds >= 0 else None,
            checksum=_get(attrs, "checksum", (str,)), path=path, attrs=dict(attrs))

    def _keys(self) -> list[str]:
        fields = [f.name for f in dataclasses.fields(self) if f.name != "attrs"]
        return fields + [k for k in self.attrs if k not in fields]

    def __getitem__(self, key: str) -> object:
        if key != "attrs" and key in self.__dataclass_fields__:
            return getattr(self, key)
        return self.attrs[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())

    def to_json(self) -> dict:
        """The metadata as JSON values: the fields, then every other attribute (JSON text
        of lists and objects decoded); non-finite floats as None, integers past 2^53 as
        decimal text."""
        out = {}
        for key in self._keys():
            value = self[key]
            if isinstance(value, str) and value[:1] in ("[", "{") and key not in self.__dataclass_fields__:
                try:
                    value = json.loads(value)
                except ValueError:
                    pass
            out[key] = _jsonable(value)
        return out


def _jsonable(value: object) -> object:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2 ** 53:
        return str(value)
    return value
