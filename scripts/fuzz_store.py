"""Fuzz of damaged store folders (issue 32): a reader opening a damaged store must never
crash, hang or answer wrongly; it answers as the undamaged store did, or raises a clear
error (a :class:`~irscale.errors.StoreError`, on the command line one line and exit
status 2) that names the damaged table and the command that rebuilds it.

A small store (a table of every layout: entries, implicit, formal, oracles) is built and
its answers recorded. Then each case damages a copy of it and opens the copy in a child
process (forked, in its own process group) that lists its tables (the Python API and
``irscale info``, ``irscale info --verify``), ranks every feasible run and every distinct
value of each scale (``Store.scale``) and looks values up (``irscale lookup``). A child
killed by a signal is a crash, one running longer than ``--timeout`` seconds a hang.

* store cases (``--cases``): each table file and the manifest in turn, damaged by byte
  flips (anywhere, in HDF5 metadata, in dataset bytes), zeroed or overwritten ranges,
  truncations and appended bytes; and each table file replaced by an empty file, a
  folder, a FIFO, symlinks (to /dev/zero, /dev/urandom, /proc/self/mem, itself,
  nowhere), another table's file or the manifest;
* manifest cases (``--manifests``): crafted manifests (every field of every wrong type,
  missing fields, unknown and huge versions, non-objects, huge files, deep nesting, bad
  encodings, lone surrogates, symlinks to devices and FIFOs, a FIFO, a folder) and
  random byte damage of the manifest text.

Prints the counts: clear errors / harmless (answers equal to the undamaged store's) /
unclear errors (another exception, or a message that does not name the damaged table
and the rebuild command) / wrong answers / crashes / hangs, and every case of the last
four. Exit status 1 if there is any.

    python scripts/fuzz_store.py [--cases 300] [--manifests 150] [--seed 1] [--jobs 2]
                                 [--timeout 10] [--json] [--keep DIR]
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

import irscale
from irscale.cli import main as cli_main
from irscale.store import folder
from irscale.store.format import UNCOVERED

MEASURES = "AP@6,nDCG_trec@6,RBP(p=0.5)@6,R@6,DCGU@4"
#: The scales asked of every store: measure -> recall bases (None: the measure has none).
SCALES = {"AP@6": [1, 3, 6], "nDCG_trec@6": [2, 6], "RBP(p=0.5)@6": [None], "R@6": [2, 6], "DCGU@4": [None]}
#: The table (file) names of the store.
TABLES = ["AP@6", "DCGU@4", "R@6", "RBP(p=0.5)@6", "nDCG_trec@6"]
OUTCOMES = ("clear", "harmless", "ignored", "unclear", "wrong", "crash", "hang")
#: Replacements of a table file that readers do not read (by design: a FIFO, device or
#: folder named like a table is never opened, a dangling link is no file): the store
#: must answer as it does without that table ("ignored").
NOT_READ = ("folder", "FIFO", "symlink to /dev/zero", "symlink to /dev/urandom", "symlink to itself",
            "dangling symlink")
#: The outcomes that are right.
FINE = ("clear", "harmless", "ignored")


# -- what a reader answers (in the child) -------------------------------------------------
def _digest(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(np.ascontiguousarray(p).tobytes())
    return h.hexdigest()


def _scale_answers(s, rb) -> str:
    """Every answer of the scale ``s``: ranks of every feasible run and of every value, k,
    the values, their counts."""
    ids = np.arange(s.measure.id_count(), dtype=np.int64)
    if rb is not None:
        ids = ids[[bin(int(i)).count("1") <= rb for i in ids]]
    return _digest(np.array([s.k, s.n_runs]), s.rank_ids(ids), s.values, s.counts, s.rank(s.values))


def _cli(argv: list[str]) -> dict:
    """``irscale ARGV``: exit status and stdout, or the error. Of ``info --json`` only the
    tables, without the attributes their checksum does not cover (when and by what they
    were written); of the text of ``info`` all but the first line (the manifest's fields)."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = cli_main(argv)
    except BaseException as e:  # noqa: BLE001 (anything escaping the CLI is judged)
        return {"ok": False, "clean": False, "message": f"raised {type(e).__name__}: {str(e)[:300]}"}
    text = out.getvalue()
    if argv[0] == "info" and "--json" in argv and rc == 0:
        doc = json.loads(text)
        for t in doc["tables"]:
            for key in UNCOVERED:
                t.pop(key, None)
        text = json.dumps(doc["tables"], sort_keys=True)
    elif argv[0] == "info":
        text = "\n".join(text.splitlines()[1:])
    lines = err.getvalue().strip().splitlines()
    errors = [line for line in lines if not line.startswith("irscale: warning") and " as " not in line[:60]]
    if rc == 0:
        return {"ok": True, "answer": hashlib.sha256(text.encode()).hexdigest()}
    clean = rc == 2 and len(errors) == 1 and errors[0].startswith("irscale: error: ")
    return {"ok": False, "clean": clean, "message": f"rc={rc}: " + " | ".join(errors)[-4000:]}


def _api(f) -> dict:
    try:
        return {"ok": True, "answer": f()}
    except irscale.StoreError as e:
        return {"ok": False, "clean": True, "type": type(e).__name__, "message": str(e)[:4000]}
    except Exception as e:  # noqa: BLE001 (any other exception is what the fuzz looks for)
        return {"ok": False, "clean": False, "type": type(e).__name__, "message": str(e)[:4000]}


def probe(path: str, lookups: dict) -> dict:
    """What a reader answers of the store at ``path``: step name -> {"ok", "answer"} or
    {"ok": False, "clean", "message"}."""
    steps: dict = {}
    opened = _api(lambda: irscale.open_store(path))
    store = opened.pop("answer", None)
    steps["open"] = dict(opened, answer="opened") if opened["ok"] else opened
    if store is not None:
        steps["tables"] = _api(lambda: [t["name"] for t in store.tables()])
        for measure, rbs in SCALES.items():
            for rb in rbs:
                steps[f"scale {measure} rb={rb}"] = _api(lambda m=measure, r=rb: _scale_answers(store.scale(m, r), r))
    steps["info"] = _cli(["info", "--json", path])
    steps["info --verify"] = _cli(["info", "--verify", path])
    for key, (measure, rb, values) in lookups.items():
        steps[key] = _cli(["lookup", path, measure, *values] + ([] if rb is None else ["--rb", str(rb)]))
    return steps


def lookups_of(path: Path) -> dict:
    """The ``irscale lookup`` calls asked of every store: a few values of each scale."""
    store = irscale.open_store(path)
    out = {}
    for measure, rbs in SCALES.items():
        for rb in rbs:
            values = store.scale(measure, rb).values
            picked = sorted({0, 1, len(values) // 2, len(values) - 1})
            out[f"lookup {measure} rb={rb}"] = (measure, rb, [repr(float(values[i])) for i in picked])
    return out


# -- damage ---------------------------------------------------------------------------------
def _ranges(file: Path) -> dict[str, list[tuple[int, int]]]:
    """(start, end) of the bytes of a table file's datasets ("data") and of its global heap
    collections ("heap": where HDF5 keeps the text of string attributes, without a
    checksum)."""
    with h5py.File(file, "r") as f:
        data = [(ds.id.get_offset(), ds.id.get_offset() + ds.id.get_storage_size()) for ds in f.values()
                if isinstance(ds, h5py.Dataset) and ds.id.get_offset() is not None and ds.id.get_storage_size()]
    raw, heap, at = file.read_bytes(), [], 0
    while (at := raw.find(b"GCOL", at)) >= 0:
        heap.append((at, min(len(raw), at + max(16, int.from_bytes(raw[at + 8:at + 16], "little")))))
        at += 4
    return {"data": data, "heap": heap}


def _rewrite(file: Path, data: bytes) -> None:
    file.unlink()
    file.write_bytes(data)


def byte_damage(file: Path, rng: random.Random, ranges: dict | None) -> str:
    """Damage ``file`` in place with one random kind of byte damage; says what it did."""
    data = bytearray(file.read_bytes())
    size = len(data)
    inside = [p for a, b in (ranges or {}).get("data", []) for p in range(a, b)]
    heap = [p for a, b in (ranges or {}).get("heap", []) for p in range(a, b)]
    outside = sorted(set(range(size)) - set(inside))
    kinds = ["flip", "flip", "flip-meta", "flip-meta", "zero", "zero", "garbage", "truncate", "truncate", "append"]
    if inside:
        kinds += ["flip-data", "flip-data"]
    if heap:
        kinds += ["flip-heap", "flip-heap", "zero-heap"]
    kind = rng.choice(kinds)
    if kind == "zero-heap":
        length = rng.choice([1, 4, 8, 16])
        start = rng.choice(heap)
        data[start:start + length] = bytes(len(data[start:start + length]))
        what = f"{kind} {length} bytes at {start}"
    elif kind.startswith("flip"):
        where = {"flip": range(size), "flip-meta": outside, "flip-data": inside, "flip-heap": heap}[kind]
        pos = sorted(rng.choice(where) for _ in range(rng.choice([1, 1, 1, 2, 4])))
        for p in pos:
            data[p] ^= rng.randrange(1, 256)
        what = f"{kind} at {pos}"
    elif kind in ("zero", "garbage"):
        length = min(size, rng.choice([1, 4, 8, 16, 64, 512, 4096]))
        start = rng.randrange(size - length + 1)
        data[start:start + length] = bytes(length) if kind == "zero" else rng.randbytes(length)
        what = f"{kind} {length} bytes at {start}"
    elif kind == "truncate":
        new = rng.choice([0, 1, 8, size // 2, size - 1, size - 8, rng.randrange(size)])
        del data[new:]
        what = f"truncate to {new} of {size} bytes"
    else:
        extra = rng.choice([1, 8, 4096])
        data += rng.randbytes(extra)
        what = f"append {extra} random bytes"
    _rewrite(file, bytes(data))
    return what


def _fifo(p: Path) -> None:
    os.mkfifo(p)


def _symlink(target: str):
    def make(p: Path) -> None:
        os.symlink(target, p)
    return make


#: Replacements of a table file: name -> make(path) (the file already removed).
TABLE_SWAPS = {
    "empty file": lambda p: p.write_bytes(b""),
    "folder": lambda p: p.mkdir(),
    "FIFO": _fifo,
    "symlink to /dev/zero": _symlink("/dev/zero"),
    "symlink to /dev/urandom": _symlink("/dev/urandom"),
    "symlink to /proc/self/mem": _symlink("/proc/self/mem"),
    "symlink to itself": lambda p: os.symlink(p.name, p),
    "dangling symlink": _symlink("no-such-file.h5"),
    "the manifest": lambda p: shutil.copyfile(p.parent / folder.MANIFEST, p),
}


def _other_table(p: Path, how: str) -> None:
    others = sorted(f for f in p.parent.glob("*.h5") if f != p)
    if how == "copy":
        shutil.copyfile(others[0], p)
    else:
        os.symlink(others[0].name, p)


def store_cases(rng: random.Random, n: int) -> list[dict]:
    """``n`` damages of the store's files: the swaps of every table file (a seeded sample
    of them, a quarter of the cases, when ``n`` is small), then byte damage of each file
    (the tables' and the manifest) in turn."""
    cases = [{"target": folder.file_of(t), "swap": s} for t in TABLES for s in [*TABLE_SWAPS, "copy", "link"]]
    if len(cases) > n // 4:
        cases = rng.sample(cases, n // 4)
    files = [folder.file_of(t) for t in TABLES] + [folder.MANIFEST]
    i = 0
    while len(cases) < n:
        cases.append({"target": files[i % len(files)], "seed": rng.randrange(1 << 30)})
        i += 1
    return cases[:n]


def _manifest(**fields) -> dict:
    m = {"format": "irscale-store", "format_version": 1, "generator": "irscale", "generator_version": "0.1.0",
         "created": "2026-01-01T00:00:00+00:00"}
    m.update(fields)
    return {k: v for k, v in m.items() if v is not _DROP}


_DROP = object()


def crafted_manifests() -> list[tuple[str, object]]:
    """(what, content): content is bytes, or a callable making the manifest at a path."""
    out: list[tuple[str, object]] = []
    bad_values = [None, 0, 1, -1, 1.5, True, False, [], [1], {}, {"a": 1}, "", "x", "1", 2 ** 70, "\u202e",
                  "x" * 60000]
    for key in ("format", "format_version", "generator", "generator_version", "created"):
        for v in bad_values:
            if v != _manifest()[key] or type(v) is not type(_manifest()[key]):
                what = f"{key} = {str(v)[:20]!r} ({type(v).__name__})"
                out.append((what, json.dumps(_manifest(**{key: v})).encode()))
        out.append((f"no {key}", json.dumps(_manifest(**{key: _DROP})).encode()))
    for v in ("2", "99", "1.0", "1e400", "NaN", "Infinity", "-0", "9" * 5000, "1" + "0" * 400):
        text = json.dumps(_manifest()).replace('"format_version": 1', f'"format_version": {v}')
        out.append((f"format_version {v[:12]}", text.encode()))
    for doc in ("[]", "null", "true", "1", '"irscale-store"', "{}", "", " ", "\0", "{", "[" * 30000,
                '{"a": ' + "[" * 20000 + "]" * 20000 + "}", "[" * 1000 + "]" * 1000, '{"format": "irscale-tables"}'):
        out.append((f"document {doc[:16]!r} ({len(doc)} chars)", doc.encode()))
    nested = _manifest(extra={"a": [[[[{"b": [[[]]]}]]]]}, tables=["AP@6"])
    out.append(("nested extra fields", json.dumps(nested).encode()))
    deep = json.dumps(_manifest())[:-1] + ', "x": ' + "[" * 25000 + "]" * 25000 + "}"
    out.append(("deeply nested field", deep.encode()))
    text = json.dumps(_manifest())
    out += [("padded to 64 KiB", text.encode().ljust(folder.MAX_MANIFEST_BYTES)),
            ("padded to 64 KiB + 1", text.encode().ljust(folder.MAX_MANIFEST_BYTES + 1)),
            ("1 MB of spaces after it", text.encode() + b" " * (1 << 20)),
            ("utf-8 BOM", b"\xef\xbb\xbf" + text.encode()),
            ("utf-16", text.encode("utf-16")),
            ("utf-32", text.encode("utf-32")),
            ("latin-1 byte in a string", text.replace("irscale\"", "irscal\xe9\"").encode("latin-1")),
            ("lone surrogate", text.replace('"irscale"', '"\\ud800"').encode()),
            ("escape sequences", text.replace('"irscale"', '"\\u001b[2J\\u0007"').encode()),
            ("NUL in a string", text.replace('"irscale"', '"irs\\u0000cale"').encode()),
            ("duplicate format_version", text.replace("{", '{"format_version": 2, ', 1).encode()),
            ("duplicate format", text.replace("{", '{"format": "x", ', 1).encode()),
            ("trailing garbage", text.encode() + b"}"),
            ("two documents", text.encode() * 2),
            ("NUL bytes after it", text.encode() + bytes(100))]

    def sparse(p: Path) -> None:
        with open(p, "wb") as fh:
            fh.write(text.encode())
            fh.truncate(1 << 40)
    out.append(("sparse 1 TB file", sparse))
    for what, make in [("FIFO", _fifo), ("folder", lambda p: p.mkdir()),
                       ("symlink to /dev/zero", _symlink("/dev/zero")),
                       ("symlink to /dev/urandom", _symlink("/dev/urandom")),
                       ("symlink to /dev/null", _symlink("/dev/null")),
                       ("symlink to /proc/self/mem", _symlink("/proc/self/mem")),
                       ("symlink to /proc/self/environ", _symlink("/proc/self/environ")),
                       ("symlink to itself", lambda p: os.symlink(p.name, p)),
                       ("dangling symlink", _symlink("nowhere.json")), ("symlink to /", _symlink("/")),
                       ("symlink to a table file", _symlink(folder.file_of("AP@6"))),
                       ("symlink to a FIFO", lambda p: (os.mkfifo(p.parent / ".fifo"), os.symlink(".fifo", p))),
                       ("missing", lambda p: None)]:
        out.append((what, make))
    return out


def manifest_cases(rng: random.Random, n: int) -> list[dict]:
    """``n`` manifests: the crafted ones (a seeded sample of them, three quarters of the
    cases, when ``n`` is smaller), then random byte damage of the manifest."""
    crafted = crafted_manifests()
    cases = [{"target": folder.MANIFEST, "crafted": i} for i in range(len(crafted))]
    if len(cases) > n:
        cases = rng.sample(cases, n * 3 // 4)
    while len(cases) < n:
        cases.append({"target": folder.MANIFEST, "seed": rng.randrange(1 << 30)})
    return cases[:n]


def damage(store: Path, case: dict, ranges: dict) -> str:
    """Damage the store folder ``store`` (a copy) as ``case`` says; says what it did."""
    file = store / case["target"]
    if "swap" in case:
        file.unlink()
        if case["swap"] in ("copy", "link"):
            _other_table(file, case["swap"])
        else:
            TABLE_SWAPS[case["swap"]](file)
        return f"{case['target']} replaced by {case['swap']}"
    if "crafted" in case:
        what, content = crafted_manifests()[case["crafted"]]
        file.unlink()
        if callable(content):
            content(file)
        else:
            file.write_bytes(content)
        return f"manifest: {what}"
    return f"{case['target']}: " + byte_damage(file, random.Random(case["seed"]), ranges.get(case["target"]))


# -- running the cases ----------------------------------------------------------------------
def _child(path: Path, lookups: dict, out: Path) -> None:
    """In the forked child: probe the store, write the result, exit (never return)."""
    code = 0
    try:
        os.setpgid(0, 0)
        fd = os.open(out.with_suffix(".log"), os.O_WRONLY | os.O_CREAT, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        result = probe(str(path), lookups)
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(result))
        tmp.rename(out)
    except BaseException:  # noqa: BLE001
        code = 3
    finally:
        os._exit(code)


def judge(steps: dict | None, reference: dict, case: dict) -> tuple[str, list[str]]:
    """(outcome, the steps that make it so) of one case against the undamaged store."""
    wrong, unclear, errors = [], [], []
    table = folder.name_of(case["target"])
    for step, ref in reference.items():
        got = steps.get(step)
        if got is None:
            if "open" in steps and not steps["open"]["ok"]:
                continue                               # not asked: the store did not open
            unclear.append(f"{step}: no answer")
        elif not ref["ok"]:                             # the reference has no answer either
            if got["ok"] or not got["clean"]:
                unclear.append(f"{step}: {got.get('message', 'answered')}")
        elif got["ok"]:
            if got["answer"] != ref["answer"]:
                wrong.append(step)
        elif not got["clean"]:
            unclear.append(f"{step}: {got.get('type', '')} {got['message']}")
        else:
            msg = got["message"]
            if table is not None and (table not in msg or "irscale build" not in msg
                                      or got.get("type") not in (None, "CorruptStoreError")):
                unclear.append(f"{step}: {got.get('type', '')} {msg}")
            errors.append(step)
    if wrong:
        return "wrong", wrong
    if unclear:
        return "unclear", unclear
    return ("clear", errors) if errors else ("harmless", [])


def run(cases: list[dict], base: Path, work: Path, lookups: dict, reference: dict, absent, jobs: int,
        timeout: float, keep: Path | None, log=print) -> list[dict]:
    """Run every case (``jobs`` children at once); returns the cases with what, outcome and
    details (``absent(table file)``: the answers of the store without it)."""
    ranges = {folder.file_of(t): _ranges(base / folder.file_of(t)) for t in TABLES}
    pending = list(enumerate(cases))
    running: dict[int, tuple[dict, Path, float]] = {}
    done = []
    while pending or running:
        while pending and len(running) < jobs:
            i, case = pending.pop(0)
            path = work / f"case-{i}"
            shutil.copytree(base, path, symlinks=True)
            case = dict(case, id=i)
            case["what"] = damage(path, case, ranges)
            out = work / f"case-{i}.json"
            pid = os.fork()
            if pid == 0:
                _child(path, lookups, out)
            running[pid] = (case, path, time.monotonic())
        time.sleep(0.002)
        for pid, (case, path, t0) in list(running.items()):
            got, status = os.waitpid(pid, os.WNOHANG)
            if got == 0 and time.monotonic() - t0 < timeout:
                continue
            if got == 0:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                case.update(outcome="hang", details=[f"still running after {timeout:g} s"])
            else:
                out = work / f"case-{case['id']}.json"
                if os.WIFSIGNALED(status):
                    case.update(outcome="crash", details=[f"killed by {signal.Signals(os.WTERMSIG(status)).name}"])
                elif not out.exists():
                    case.update(outcome="crash", details=[f"exit status {os.WEXITSTATUS(status)}, no result"])
                else:
                    ignored = case.get("swap") in NOT_READ
                    ref = absent(case["target"]) if ignored else reference
                    outcome, details = judge(json.loads(out.read_text()), ref, case)
                    case.update(outcome="ignored" if ignored and outcome == "harmless" else outcome, details=details)
            del running[pid]
            case["seconds"] = round(time.monotonic() - t0, 2)
            bad = case["outcome"] not in FINE
            if bad:
                log(f"case {case['id']} {case['outcome']}: {case['what']}: {'; '.join(case['details'])[:600]}")
            if bad and keep is not None:
                shutil.copytree(path, keep / f"case-{case['id']}", symlinks=True, dirs_exist_ok=True)
            _remove(path)
            for suffix in (".json", ".log", ".tmp"):
                Path(work / f"case-{case['id']}{suffix}").unlink(missing_ok=True)
            done.append(case)
    return sorted(done, key=lambda c: c["id"])


def _remove(path: Path) -> None:
    """Remove a case's store copy, whatever its damage made of it (FIFOs, folders, links)."""
    shutil.rmtree(path, ignore_errors=True)


def build(path: Path) -> None:
    """The undamaged store (without its lock folder, which readers do not look at)."""
    irscale.build_store(path, MEASURES, n_jobs=1)
    shutil.rmtree(path / folder.LOCKS, ignore_errors=True)


def counts(cases: list[dict]) -> dict:
    return {o: sum(c["outcome"] == o for c in cases) for o in OUTCOMES}


def fuzz(n_store: int, n_manifest: int, seed: int = 1, jobs: int = 2, timeout: float = 10.0,
         keep: Path | None = None, log=print) -> dict:
    """Run the fuzz; returns {"store": counts, "manifest": counts, "cases": [...], "seconds"}."""
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="irscale-fuzz-") as td:
        base = Path(td) / "store"
        build(base)
        lookups = lookups_of(base)
        reference = probe(str(base), lookups)    # also compiles the kernels before the forks
        bad = {k: v for k, v in reference.items() if not v["ok"]}
        if bad:
            raise RuntimeError(f"the undamaged store does not answer: {bad}")
        answers_without: dict[str, dict] = {}

        def absent(target: str) -> dict:
            """The answers of the store without the table file ``target``."""
            if target not in answers_without:
                without = Path(td) / f"without-{target}"
                shutil.copytree(base, without)
                (without / target).unlink()
                answers_without[target] = probe(str(without), lookups)
            return answers_without[target]
        rng = random.Random(seed)
        cases = [dict(c, kind="store") for c in store_cases(rng, n_store)] + \
            [dict(c, kind="manifest") for c in manifest_cases(rng, n_manifest)]
        work = Path(td) / "work"
        work.mkdir()
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
        done = run(cases, base, work, lookups, reference, absent, jobs, timeout, keep, log)
    return {kind: counts([c for c in done if c["kind"] == kind]) for kind in ("store", "manifest")} | {
            "cases": done,
            "seconds": round(time.perf_counter() - t0, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=300, help="damaged stores (table files and the manifest)")
    ap.add_argument("--manifests", type=int, default=150, help="damaged or crafted manifests")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2, help="children at once")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds after which a child counts as hung")
    ap.add_argument("--json", action="store_true", help="print the counts and the bad cases as JSON")
    ap.add_argument("--keep", type=Path, help="copy the store of every bad case into this folder")
    args = ap.parse_args(argv)
    result = fuzz(args.cases, args.manifests, args.seed, args.jobs, args.timeout, args.keep,
                  log=(lambda *a: None) if args.json else print)
    bad = [c for c in result["cases"] if c["outcome"] not in FINE]
    if args.json:
        print(json.dumps({"store": result["store"], "manifest": result["manifest"], "seconds": result["seconds"],
                          "bad": bad}))
    else:
        for kind in ("store", "manifest"):
            c = result[kind]
            print(f"{sum(c.values())} damaged {'stores' if kind == 'store' else 'manifests'}: "
                  + ", ".join(f"{v} {k}" for k, v in c.items()))
        print(f"{len(result['cases'])} cases in {result['seconds']} s (timeout {args.timeout:g} s, "
              f"{args.jobs} at once)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
