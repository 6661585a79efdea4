"""Fuzzing damaged stores (issue 13, item 2; store folders: issue 32, at the end of this
file, by ``scripts/fuzz_store.py``): a store damaged anywhere gives a clean
:class:`~irscale.errors.StoreError` or the right answers, never a crash, a wrong answer
or another exception.

A small store with a table of every layout (entries with and without strata, several
blocks, implicit, fraction, formal) is built once, its answers computed (every run
ranked by id, every distinct value ranked, values of every rank, counts, mid-ranks,
value blocks, k and runs per scale: :func:`answers`). Then, seeded, each case damages a
copy: bytes flipped anywhere in the file (HDF5 metadata, dataset bytes, attributes), or
an attribute or dataset element edited (n_entries, a run id set to 0xFFFFFF00, strata
bytes, counts, index_cum, index_raw, distinct_by_rb, num/den/keys, ...). A worker
subprocess (this file run as a script, so that a segfault shows as a negative return
code instead of killing pytest) opens each copy, answers, and runs ``irscale info
--verify``; a crashed worker is restarted after the case that crashed it.

Every case must end in a StoreError or the right answers, and ``info --verify`` must
exit 0 (answers right) or 2 (one line), never raise, and 2 wherever the answers were not
right. The cases run both as shipped (small tables verified whole on opening) and with
whole verification off (as for tables of 64 MiB or more: the checks of the file and the
block index, and lookups verify the blocks of entries they read).

The tests run a bounded number of cases (``IRSCALE_FUZZ_CASES``, default 300, for the
many-cases test); ``scripts/fuzz_store.py`` fuzzes store folders for as long as asked.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
from store_files import build_packed

import irscale
from irscale.cli import main
from irscale.store import folder as folder_module
from irscale.store import reader

MEASURES = "AP@11,DCG(b=2)@8,P@8,R@8,RBP(p=0.5)@8,Twist@6,DCGU@4"
RB_COUNTS = {"Twist@6": [(2,)]}
#: Scales answered per table: measure -> recall bases.
SCALES = {"AP@11": [1, 4, 11], "DCG(b=2)@8": [None], "P@8": [None], "R@8": [2, 8], "RBP(p=0.5)@8": [None],
          "Twist@6": [2], "DCGU@4": [None]}


# -- answers (parent on the intact store, worker on damaged copies) ------------------------
def answers(store) -> dict:
    """What a store answers, per scale, as a sha256 of every answer."""
    out = {}
    for measure, rbs in SCALES.items():
        for rb in rbs:
            s = store.scale(measure, rb)
            m = s.measure
            ids = np.arange(m.id_count(), dtype=np.int64)
            if rb is not None:
                ids = ids[[bin(int(i)).count("1") <= rb for i in ids]]
            ranks = np.arange(1, s.k + 1)
            h = hashlib.sha256()
            for part in (np.array([s.k, s.n_runs]), s.rank_ids(ids), s.values, s.counts, s.rank(s.values),
                         s.values_of_ranks(ranks), s.midranks_of_ranks(ranks), np.array(s.value_range())):
                h.update(np.ascontiguousarray(part).tobytes())
            blocks = list(s.value_blocks(chunk=100))       # where blocks end is the layout's: not an answer
            for part in (np.concatenate([v for v, _ in blocks]), np.concatenate([c for _, c in blocks])):
                h.update(np.ascontiguousarray(part).tobytes())
            out[f"{measure} rb={rb}"] = h.hexdigest()
    return out


# -- the worker ---------------------------------------------------------------------------
def _worker(spec_path: str, start: int) -> None:
    """Answer the cases of ``spec_path`` from ``start`` on, one JSON line per case."""
    spec = json.loads(Path(spec_path).read_text())
    if spec["big"]:
        reader.VERIFY_ON_OPEN_BYTES = 0
    for case in spec["cases"][start:]:
        out = {"case": case["id"]}
        try:
            got = answers(irscale.open_store(case["path"]))
            wrong = sorted(k for k in spec["reference"] if got.get(k) != spec["reference"][k])
            out["outcome"] = "wrong" if wrong else "right"
            out["wrong"] = wrong
        except Exception as e:  # noqa: BLE001  (every exception is recorded and judged by the test)
            out.update(outcome="error", type=type(e).__name__, store_error=isinstance(e, irscale.StoreError),
                       message=str(e)[:300])
        if not (case["verify"] or out["outcome"] != "right"):
            print(json.dumps(out), flush=True)
            continue
        stdout, stderr = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                out["verify_rc"] = main(["info", case["path"], "--verify"])
            out["verify_err"] = stderr.getvalue()[-300:]
        except BaseException as e:  # noqa: BLE001
            out["verify_rc"] = f"raised {type(e).__name__}: {str(e)[:200]}"
        print(json.dumps(out), flush=True)


def run_cases(cases: list[dict], reference: dict, big: bool, folder: Path, workers: int = 2) -> list[dict]:
    """Results of ``cases``, by ``workers`` worker subprocesses at once, each given every
    ``workers``-th case and restarted after a crash (the case it was on counts as one)."""
    parts = [cases[i::workers] for i in range(workers)]
    specs = []
    for i, part in enumerate(parts):
        spec = folder / f"spec-{int(big)}-{i}.json"
        spec.write_text(json.dumps({"big": big, "reference": reference, "cases": part}))
        specs.append(spec)
    results: list[list[dict]] = [[] for _ in parts]
    procs: dict[int, subprocess.Popen] = {}
    while True:
        for i, part in enumerate(parts):
            if i not in procs and len(results[i]) < len(part):
                procs[i] = subprocess.Popen([sys.executable, __file__, "worker", str(specs[i]), str(len(results[i]))],
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=folder)
        if not procs:
            return sorted((r for rs in results for r in rs), key=lambda r: r["case"])
        i, proc = next(iter(procs.items()))
        out, err = proc.communicate(timeout=600)
        del procs[i]
        for line in out.splitlines():
            if line.startswith("{"):
                results[i].append(json.loads(line))
        if proc.returncode != 0 and len(results[i]) < len(parts[i]):
            results[i].append({"case": parts[i][len(results[i])]["id"], "outcome": "crash", "rc": proc.returncode,
                               "stderr": err[-500:]})


# -- damage ---------------------------------------------------------------------------------
def _dataset_ranges(path: Path) -> list[tuple[int, int, str]]:
    with h5py.File(path, "r") as f:
        out = []
        for name, g in f["tables"].items():
            for dname, ds in g.items():
                if ds.id.get_offset() is not None and ds.nbytes:
                    out.append((ds.id.get_offset(), ds.id.get_offset() + ds.nbytes, f"{name}/{dname}"))
        return out


def _flip(path: Path, positions: list[int], rng: random.Random) -> None:
    with open(path, "r+b") as fh:
        for pos in positions:
            fh.seek(pos)
            b = fh.read(1)[0]
            fh.seek(pos)
            fh.write(bytes([b ^ rng.randrange(1, 256)]))


def _edit_attr(path: Path, rng: random.Random) -> str:
    with h5py.File(path, "a") as f:
        names = list(f["tables"])
        g = f["tables"][rng.choice(names)]
        key = rng.choice(sorted(g.attrs))
        v = g.attrs[key]
        if isinstance(v, bytes):
            v = v.decode()
        if isinstance(v, (bool, np.bool_)):
            new = not bool(v)
        elif isinstance(v, (int, np.integer)):
            new = int(v) + rng.choice([-1, 1, 2, 100, -100, 1 << 20, 1 << 40, -int(v) - 1])
        elif isinstance(v, (float, np.floating)):
            new = rng.choice([float(v) * 2, float(v) / 2, -float(v), float(v) + 1e-9, float("nan"), 1e300, 0.0])
        else:
            s = str(v)
            try:
                doc = json.loads(s)
            except ValueError:
                doc = None
            if isinstance(doc, list) and doc and all(isinstance(x, int) for x in doc):
                i = rng.randrange(len(doc))
                doc[i] += rng.choice([-1, 1, 100])
                new = json.dumps(doc)
            elif s:
                i = rng.randrange(len(s))
                new = s[:i] + chr((ord(s[i]) + rng.randrange(1, 50)) % 128 or 65) + s[i + 1:]
            else:
                new = "x"
        g.attrs[key] = new
        return f"attr {g.name}.{key}: {v!r} -> {new!r}"


def _edit_element(path: Path, rng: random.Random) -> str:
    with h5py.File(path, "a") as f:
        choices = [(n, d) for n, g in f["tables"].items() for d in g]
        name, dname = rng.choice(choices)
        ds = f["tables"][name][dname]
        idx = tuple(rng.randrange(s) for s in ds.shape)
        old = ds[idx]
        if ds.dtype.kind == "f":
            new = rng.choice([old + 1e-12, old * (1 + 1e-15), old - 1, np.nan, -np.inf, old + 1e-3])
        elif dname == "ids" and rng.random() < 0.4:
            new = 0xFFFFFF00
        elif dname == "strata":
            new = int(old) ^ (1 << rng.randrange(8))
        else:
            info = np.iinfo(ds.dtype)
            new = int(old) + rng.choice([-1, 1, 2, -2, 100, -100, 1 << 16])
            if rng.random() < 0.2:
                new = rng.choice([0, info.max, info.min])
            new = min(max(new, info.min), info.max)
        ds[idx] = new
        return f"element {name}/{dname}{list(idx)}: {old!r} -> {new!r}"


#: The damages of the issue, each on every table it applies to.
ISSUE_DAMAGES = [("attr", "n_entries", +1), ("attr", "n_entries", -1), ("attr", "n_entries", 1 << 30),
                 ("ids", 0, 0xFFFFFF00), ("ids", -1, 0xFFFFFF00), ("ids", "mid", 0xFFFFFF00),
                 ("strata", "mid", 0x01), ("strata", 0, 0x80), ("strata", "mid", 0x80),
                 ("index_cum", "last", 100), ("index_cum", "mid", 1), ("index_raw", "mid", 1e-9),
                 ("counts", "mid", 1), ("attr", "distinct_by_rb", 1)]


def _issue_damage(path: Path, table: str, damage: tuple) -> str | None:
    what, where, delta = damage
    with h5py.File(path, "a") as f:
        g = f["tables"][table]
        if what == "attr":
            if where not in g.attrs:
                return None
            v = g.attrs[where]
            if where == "distinct_by_rb":
                doc = json.loads(v)
                if not doc:
                    return None
                doc[len(doc) // 2] += delta
                g.attrs[where] = json.dumps(doc)
            else:
                g.attrs[where] = int(v) + delta
            return f"{table}.{where} {damage}"
        if what not in g:
            return None
        ds = g[what]
        n = ds.shape[0]
        i = {0: 0, -1: n - 1, "mid": n // 2, "last": n - 1}[where]
        if what == "ids":
            ds[i] = delta
        elif what == "strata":
            ds[i] = int(ds[i]) ^ delta
        elif what == "index_cum":
            row = ds[i]
            row[len(row) // 2:] += delta
            ds[i] = row
        else:
            ds[i] = ds[i] + delta
        return f"{table}/{what}[{where}] {damage}"


def make_cases(store: Path, folder: Path, seed: int, n: int, verify_every: int = 1) -> list[dict]:
    """The issue's damages and seeded random ones, ``n`` copies of ``store`` in all; ``info
    --verify`` runs on the issue's damages, every ``verify_every``-th random one and every
    one whose answers are not right."""
    rng = random.Random(seed)
    ranges = _dataset_ranges(store)
    size = store.stat().st_size
    data = [p for a, b, _ in ranges for p in range(a, b)]
    covered = set(data)
    meta = [p for p in range(size) if p not in covered]
    with h5py.File(store, "r") as f:
        tables = list(f["tables"])
    cases = []

    def new_copy():
        p = folder / f"case-{seed}-{len(cases)}.h5"
        shutil.copyfile(store, p)
        return p

    for table in tables:
        for damage in ISSUE_DAMAGES:
            p = new_copy()
            what = _issue_damage(p, table, damage)
            if what is None:
                p.unlink()
                continue
            cases.append({"id": len(cases), "path": str(p), "what": what, "verify": True})
    while len(cases) < n:
        p = new_copy()
        kind = rng.choice(["flip", "flip-meta", "flip-data", "attr", "attr", "element", "element", "element"])
        if kind == "flip":
            pos = [rng.randrange(size) for _ in range(rng.choice([1, 1, 2, 3]))]
            what = f"flip {pos}"
            _flip(p, pos, rng)
        elif kind == "flip-meta":
            pos = [rng.choice(meta)]
            what = f"flip metadata {pos}"
            _flip(p, pos, rng)
        elif kind == "flip-data":
            pos = [rng.choice(data)]
            what = f"flip data {pos} " + next(name for a, b, name in ranges if a <= pos[0] < b)
            _flip(p, pos, rng)
        elif kind == "attr":
            what = _edit_attr(p, rng)
        else:
            what = _edit_element(p, rng)
        cases.append({"id": len(cases), "path": str(p), "what": what, "verify": len(cases) % verify_every == 0})
    return cases


def summarise(results: list[dict], cases: list[dict]) -> dict:
    what = {c["id"]: c["what"] for c in cases}
    counts = {"cases": len(results), "errors": 0, "right": 0, "wrong": 0, "crashes": 0, "foreign": 0,
              "verified": sum("verify_rc" in r for r in results), "verify_flagged": 0, "verify_bad": 0}
    bad = []
    for r in results:
        o = r["outcome"]
        if o == "error" and r["store_error"]:
            counts["errors"] += 1
        elif o == "error":
            counts["foreign"] += 1
            bad.append((what[r["case"]], f"{r['type']}: {r['message']}"))
        elif o == "crash":
            counts["crashes"] += 1
            bad.append((what[r["case"]], f"crash rc={r['rc']}: {r['stderr']}"))
        else:
            counts[o] += 1
        if "verify_rc" not in r:
            continue
        v = r["verify_rc"]
        if v == 2:
            counts["verify_flagged"] += 1
        elif v != 0:
            counts["verify_bad"] += 1
            bad.append((what[r["case"]], f"info --verify: {v}"))
        if o == "wrong" and v != 2:
            bad.append((what[r["case"]], f"wrong answers {r['wrong']} and info --verify passes"))
        if o == "error" and v == 0:
            bad.append((what[r["case"]], f"{r['type']} ({r['message']}) and info --verify passes"))
    counts["problems"] = bad
    return counts


# -- the tests ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """(folder, {"v4": path}, {"v4": answers}): a packed store and its answers."""
    folder = tmp_path_factory.mktemp("fuzz")
    paths = {"v4": build_packed(folder / "v4.h5", MEASURES, n_jobs=1, rb_counts=RB_COUNTS, layout="table")}
    return folder, paths, {k: answers(irscale.open_store(p)) for k, p in paths.items()}


def _fuzz(stores, version: str, big: bool, seed: int, n: int, verify_every: int = 1) -> dict:
    folder, paths, ref = stores
    sub = folder / f"{version}-{int(big)}-{seed}"
    sub.mkdir(exist_ok=True)
    cases = make_cases(paths[version], sub, seed, n, verify_every)
    results = run_cases(cases, ref[version], big, sub)
    summary = summarise(results, cases)
    print(f"\nfuzz {version} {'structural only' if big else 'as shipped'} seed {seed}: "
          + ", ".join(f"{k}={v}" for k, v in summary.items() if k != "problems"))
    return summary


VERIFY_EVERY = 4


@pytest.mark.slow
def test_damaged_stores_structural_validation_only(stores):
    """As for tables of 64 MiB or more (not verified whole on opening): the attributes and
    the block index are still verified, and lookups verify the blocks of entries they
    read against their block sums, so never a wrong answer either."""
    s = _fuzz(stores, "v4", big=True, seed=21, n=90, verify_every=VERIFY_EVERY)
    assert s["problems"] == [] and s["wrong"] == 0 and s["crashes"] == 0 and s["foreign"] == 0
    assert s["errors"] > s["cases"] // 2


#: Cases of ``test_damaged_stores_many``: 300 in a test run; ``IRSCALE_FUZZ_CASES=1500 pytest
#: --runslow tests/test_store_fuzz.py -k many`` runs a long fuzz.
MANY = int(os.environ.get("IRSCALE_FUZZ_CASES", "300"))


@pytest.mark.slow
def test_damaged_stores_many(stores):
    """MANY damaged stores (300; small tables verified whole on opening, as shipped),
    every one verified with info --verify too: 0 wrong, 0 crashes, 0 other exceptions, 0
    hangs (a worker that hangs fails the test by its time limit). The folder fuzz of the
    issue (300 stores, 150 manifests) is ``scripts/fuzz_store.py``."""
    s = _fuzz(stores, "v4", big=False, seed=1013, n=MANY)
    assert s["cases"] == MANY and s["problems"] == [] and s["crashes"] == 0 and s["foreign"] == 0
    assert s["wrong"] == 0


# -- store folders (issue 32): scripts/fuzz_store.py ----------------------------------------
FUZZ_SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "fuzz_store.py"
RANK_STEPS = ("scale ", "lookup ")


def fuzz_folders(folder: Path, *args: str) -> dict:
    """The counts and the bad cases of ``scripts/fuzz_store.py ARGS`` (damaged store folders
    and manifests, each opened in a child process: a crash is a signal, a hang 10 s)."""
    r = subprocess.run([sys.executable, str(FUZZ_SCRIPT), "--json", *args], cwd=folder, capture_output=True,
                       text=True, timeout=1200)
    assert r.returncode in (0, 1), r.stderr[-2000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    print(f"\nfuzz of store folders {' '.join(args)}: stores {out['store']}, manifests {out['manifest']}, "
          f"{out['seconds']} s")
    return out


def _wrong_ranks(out: dict) -> list:
    return [c for c in out["bad"] if c["outcome"] == "wrong" and any(d.startswith(RANK_STEPS) for d in c["details"])]


@pytest.mark.slow      # about 30 s
def test_damaged_store_folders(tmp_path):
    """Table files and manifests damaged (byte flips, zeroed ranges, truncations, files
    swapped for FIFOs, folders, devices, links) and crafted manifests: never a crash, a
    hang or a wrong rank; every damaged manifest is a clear StoreError or harmless."""
    out = fuzz_folders(tmp_path, "--cases", "16", "--manifests", "10", "--seed", "32")
    assert out["bad"] == []
    assert out["store"]["crash"] == out["manifest"]["crash"] == 0, out["bad"]
    assert out["store"]["hang"] == out["manifest"]["hang"] == 0, out["bad"]
    assert _wrong_ranks(out) == []
    assert [c for c in out["bad"] if c["kind"] == "manifest"] == []
    assert out["store"]["clear"] > 5 and out["manifest"]["clear"] > 5     # the damages matter
    assert out["store"]["harmless"] + out["manifest"]["harmless"] > 2     # and some do not


def test_every_crafted_manifest_is_read_or_refused(tmp_path):
    """Each crafted manifest of the fuzz (wrong types, huge, deeply nested, bad encodings,
    FIFOs, devices, links, ...) is read as a manifest of version 1 or refused with a
    StoreError; nothing else is raised."""
    spec = importlib.util.spec_from_file_location("fuzz_store", FUZZ_SCRIPT)
    fuzz = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fuzz)
    refused = 0
    for i, (what, content) in enumerate(fuzz.crafted_manifests()):
        store = tmp_path / f"m{i}"
        store.mkdir()
        file = store / folder_module.MANIFEST
        content(file) if callable(content) else file.write_bytes(content)
        try:
            manifest = folder_module.read_manifest(store)
        except irscale.StoreError:
            refused += 1
            continue
        assert manifest["format"] == "irscale-store" and manifest["format_version"] == 1, what
    assert refused > 60


def test_text_in_the_global_heap_is_refused_unread(tmp_path):
    """Variable-length text attributes lie in the file's global heap, which has no
    checksum: zeroed bytes there make HDF5 loop forever reading them (h5py 3.16, HDF5
    2.0). irscale writes none, and a reader refuses a file that has them before reading
    one: no hang, no child process to screen the file."""
    file = tmp_path / "heap.h5"
    with h5py.File(file, "w", libver="latest") as f:
        for k in range(20):
            f.attrs[f"a{k}"] = "some text of an attribute " * 4
    data = bytearray(file.read_bytes())
    heap = data.find(b"GCOL")
    assert heap > 0
    data[heap + 347:heap + 411] = bytes(64)
    file.write_bytes(bytes(data))
    code = f"import irscale\ntry:\n    irscale.open_store({str(file)!r})\nexcept irscale.StoreError as e:\n    print(e)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "not of a type irscale writes" in done.stdout, done


if __name__ == "__main__" and len(sys.argv) == 4 and sys.argv[1] == "worker":
    _worker(sys.argv[2], int(sys.argv[3]))
