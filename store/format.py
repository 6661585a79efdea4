"""The table format (version 4).

A store is a folder of HDF5 files, one per table (:mod:`irscale.store.folder`), or one
packed HDF5 file (:mod:`irscale.store.pack`) whose root has the attributes
format="irscale-tables", format_version=4, generator, generator_version, created, and
whose groups ``/tables/<name>`` (:func:`table_name`) are tables. A table, the root of its
file or a group, is of the latest HDF5 file format (checksummed superblock and object
headers); its attributes, fixed-length text held in the checksummed object header, are
those of :class:`TableInfo`, rb_dependent, digests, complete and those of its layout, whose
contiguous datasets it holds (:mod:`irscale.scales.tables.layouts`). ``digests`` is the
JSON ``{dataset: [dtype, shape, sha256]}`` of every dataset (its bytes little-endian, in C
order); ``checksum`` (:func:`table_checksum`) covers every attribute but :data:`UNCOVERED`,
itself and ``complete``: every dataset through its digest and every attribute that decides
an answer, and a rebuild gives the same checksum. Readers: :mod:`irscale.store.reader`.
"""
from __future__ import annotations

import contextlib
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
#: The hash of table checksums and dataset digests.
new_checksum = hashlib.sha256
#: Integers past int64 (the run counts and K of bounded scales, up to 2^1000 and more) are
#: stored as decimal text (:func:`int_attr`); readers take either.
_DECIMAL = re.compile(r"[0-9]{1,4000}")


def table_name(measure: str, table_rb: tuple | None = None) -> str:
    """The name of a table: the canonical measure name, and for tables of one recall-base
    vector that vector (``nDCG(b=2,gains=(0,1,2))@10 rb=(3,10)``)."""
    return str(measure) if table_rb is None else f"{measure} rb=({','.join(str(int(c)) for c in table_rb)})"


def table_path(measure: str, table_rb: tuple | None = None) -> str:
    """HDF5 path of a table in a packed file."""
    return f"/tables/{table_name(measure, table_rb)}"


def _tagged(value: object) -> list:
    """An attribute value with its type, in a form that JSON keeps exactly."""
    if isinstance(value, bool):
        return ["bool", value]
    if isinstance(value, int):
        return ["int", str(value)]
    if isinstance(value, float):
        return ["float", value.hex() if math.isfinite(value) else repr(value)]
    return ["str", value] if isinstance(value, str) else [type(value).__name__, repr(value)]


def table_checksum(attrs: dict) -> str:
    """The checksum of a table from its decoded attributes: the sha256 of those it covers,
    sorted by name, each with its type."""
    items = json.dumps([[k, *_tagged(attrs[k])] for k in sorted(attrs) if k not in _NOT_HASHED], ensure_ascii=True,
                       separators=(",", ":"))
    return new_checksum(b"irscale-table-v4\0" + items.encode()).hexdigest()


def decode_attrs(attrs: Mapping) -> dict:
    """HDF5 attributes as Python values (bytes decoded, numpy scalars as Python scalars)."""
    return {k: v.decode() if isinstance(v, bytes) else v.item() if isinstance(v, np.generic) else v
            for k, v in attrs.items()}


def digest_entry(dtype: np.dtype, shape: tuple, hexdigest: str) -> list:
    """What ``digests`` records of one dataset: [dtype, shape, sha256]."""
    return [np.dtype(dtype).str, [int(s) for s in shape], hexdigest]


def little_endian_bytes(arr: np.ndarray) -> memoryview:
    """The bytes a digest covers (a view of the array's memory when it is little-endian
    and in C order already)."""
    return memoryview(np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).reshape(-1)).cast("B")


def int_attr(value: int) -> int | str:
    """An integer as an HDF5 attribute: itself within int64, else its decimal text."""
    value = int(value)
    return value if abs(value) < 2 ** 63 else str(value)


def _get(attrs: Mapping, key: str, kinds: tuple, default: object = ..., text: bool = False) -> object:
    """attrs[key] (``default`` when absent; ``text``: decoded from its JSON text) when of
    ``kinds``, else ValueError naming it."""
    v = json.loads(_get(attrs, key, (str,), default)) if text else attrs.get(key, default)
    if not isinstance(v, kinds) or isinstance(v, bool) and bool not in kinds:
        raise ValueError(f"attr {key} is {(attrs.get(key) if text else v)!r}")
    return v


def _int(attrs: Mapping, key: str, default: object = ...) -> int:
    v = attrs.get(key, default)
    return int(v) if isinstance(v, str) and _DECIMAL.fullmatch(v) else _get(attrs, key, (int,), default)


def _ints(attrs: Mapping, key: str, default: str = "[]") -> tuple[int, ...] | None:
    """attrs[key]: the JSON text of a list of integers (or of null, when that is the default)."""
    values = _get(attrs, key, (list, type(json.loads(default))), default, text=True)
    if values is not None and not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise ValueError(f"attr {key} is {values!r}")
    return values if values is None else tuple(values)


@dataclasses.dataclass(frozen=True)
class TableInfo(Mapping):
    """The metadata of one stored table, decoded and type-checked once
    (:meth:`from_attrs`): ``params`` a dict, ``rel``, ``distinct_by_rb`` and ``rb_counts``
    tuples, run counts Python integers of any size, ``build_seconds`` None when unknown;
    ``attrs`` holds every attribute as stored. As a read-only mapping it gives the fields
    and the other attributes by name (``info["n_runs"]``)."""

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
        raises ValueError naming an attribute that is missing or of a wrong type (whether
        the values are right is checked when the table is opened)."""
        measure, rb_counts = _get(attrs, "measure", (str,)), _ints(attrs, "rb_counts", "null")
        seconds = float(_get(attrs, "build_seconds", (int, float), -1.0))
        layout = attrs.get("layout") or ("implicit" if attrs.get("implicit") else "entries")
        fields = {k: _int(attrs, k) for k in ("n", "n_entries", "n_runs", "n_distinct", "format_version")}
        fields |= {k: _get(attrs, k, (str,)) for k in ("tie_method", "generator_version", "created", "checksum")}
        fields |= {k: float(_get(attrs, k, (int, float))) for k in ("error_bound", "min_gap")}
        return cls(
            name=table_name(measure, rb_counts), measure=measure, rb_counts=rb_counts,
            family=_get(attrs, "family", (str,), measure.split("(")[0].split("@")[0]),
            params=_get(attrs, "params", (dict,), "{}", text=True), rel=_ints(attrs, "rel"),
            layout=_get({"layout": layout}, "layout", (str,)), distinct_by_rb=_ints(attrs, "distinct_by_rb"),
            implicit=bool(attrs.get("implicit", False)), min_gap_exact=str(attrs.get("min_gap_exact", "")),
            redecided=_int(attrs, "redecided", 0), build_seconds=seconds if seconds >= 0 else None, path=path,
            attrs=dict(attrs), **fields)

    def __getitem__(self, key: str) -> object:
        return getattr(self, key) if key != "attrs" and key in self.__dataclass_fields__ else self.attrs[key]

    def __iter__(self) -> Iterator[str]:
        fields = [f.name for f in dataclasses.fields(self) if f.name != "attrs"]
        return iter(fields + [k for k in self.attrs if k not in fields])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def to_json(self) -> dict:
        """The metadata as JSON values: the fields, then every other attribute (JSON text
        of lists and objects decoded); non-finite floats as None, integers past 2^53 as
        decimal text."""
        out = {}
        for key in self:
            value = self[key]
            if isinstance(value, str) and value[:1] in ("[", "{") and key not in self.__dataclass_fields__:
                with contextlib.suppress(ValueError):
                    value = json.loads(value)
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
