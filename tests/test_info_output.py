"""``irscale info`` explains itself: columns in words with a legend of every tie method
shown, distinct values per recall base labelled with their rb, a verdict per table from
``--verify``, and lists and objects (not JSON text) in ``--json``."""
import json
import re
import shutil

import h5py
import pytest
from click.testing import CliRunner
from store_files import table_file

import irscale
from irscale.cli import cli, main
from irscale.errors import IrscaleError

MEASURES = "AP@6,P@6,DCG(b=2)@6"
NAMES = ["AP@6", "DCG(b=2)@6", "P@6"]


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("info") / "t.h5"
    irscale.build_store(path, MEASURES, n_jobs=1)
    return path


def _info(*args):
    return CliRunner().invoke(cli, ["info", *map(str, args)])


def _no_json_text(value, where="output"):
    """No string anywhere in ``value`` is the JSON text of a list or an object."""
    if isinstance(value, dict):
        for k, v in value.items():
            _no_json_text(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _no_json_text(v, f"{where}[{i}]")
    elif isinstance(value, str):
        assert value[:1] not in ("[", "{"), f"{where} is JSON text: {value!r}"


def test_json_gives_lists_and_objects(store_path):
    result = _info(store_path, "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    _no_json_text(doc)
    store = irscale.open_store(store_path)
    tables = {t["measure"]: t for t in doc["tables"]}
    assert sorted(tables) == NAMES
    for t in tables.values():
        assert isinstance(t["params"], dict) and isinstance(t["rel"], list) and t["rel"] == [0, 1]
        assert isinstance(t["distinct_by_rb"], list)
        assert isinstance(t["n_distinct"], int)
        assert isinstance(t["min_gap"], float) or (t["layout"] == "oracle" and t["min_gap"] is None)
    assert tables["DCG(b=2)@6"]["params"] == {"b": 2, "gains": [0, 1]}
    assert tables["P@6"]["distinct_by_rb"] == [] and tables["DCG(b=2)@6"]["distinct_by_rb"] == []
    assert tables["AP@6"]["distinct_by_rb"] == [store.scale("AP@6", rb).k for rb in range(1, 7)]
    assert tables["AP@6"]["distinct_by_rb"][-1] == tables["AP@6"]["n_distinct"]


def _rows(out):
    """The text table: header cells' start columns and the rows, cut at those columns."""
    lines = out.splitlines()
    i = next(i for i, line in enumerate(lines) if line.startswith("table "))
    header = lines[i]
    names = [h for h in re.split(r"\s{2,}", header.strip())]
    starts = [header.index(h) for h in names]
    rows = []
    for line in lines[i + 1:]:
        if not line.strip():
            break
        bounds = starts + [len(line) + 1]
        rows.append({h: line[bounds[j]:bounds[j + 1]].strip() for j, h in enumerate(names)})
    return names, rows


def test_legend_explains_every_tie_method_shown(store_path):
    result = _info(store_path)
    assert result.exit_code == 0, result.output
    out = result.stdout
    names, rows = _rows(out)
    for column in ("distinct values", "stored entries", "how ties were decided", "float error bound",
                   "smallest gap"):
        assert column in names, names
    assert [r["table"] for r in rows] == NAMES
    shown = {r["how ties were decided"].split(",")[0] for r in rows}
    stored = {t["tie_method"] for t in irscale.open_store(store_path).tables()}
    assert shown == stored == {"exact-integer", "oracle:formal-log+mpmath60"}
    legend = out.split("how ties were decided:\n", 1)[1].splitlines()
    for method in shown:
        entry = [line for line in legend if line.startswith(f"  {method} ")]
        assert entry, f"no legend entry for {method}:\n{out}"
        assert len(entry[0].split(method, 1)[1].strip()) > 20      # an explanation, not just the name
    words = " ".join(out.split())                                  # the legend is wrapped
    assert "mpmath at 60 digits" in words and "integer arithmetic" in words
    for column in ("float error bound", "smallest gap"):                # explained below the table
        explained = re.search(rf"(?m)^{re.escape(column)}: (.+)$", out)
        assert explained and len(explained.group(1).split()) >= 5, f"no legend entry for {column}:\n{out}"
    # AP's distinct values are over all recall bases: the output says so and where to look
    note = words.split("distinct values: ", 1)[1].split("float error bound:", 1)[0]
    assert "AP@6" in note and "P@6," not in note and "recall base" in note and "see --by-rb" in note


def test_by_rb_counts_are_labelled_with_their_rb(store_path):
    result = _info(store_path, "--by-rb")
    assert result.exit_code == 0, result.output
    lines = result.stdout.split("distinct values per recall base:", 1)[1].splitlines()
    block = []
    for line in lines:
        if block and not line.startswith(" " * 4):
            break
        if block or line.startswith("  AP@6 "):
            block.append(line)
    assert block, result.stdout
    counts = {int(r): int(k) for r, k in re.findall(r"rb=(\d+): (\d+)", " ".join(block))}
    store = irscale.open_store(store_path)
    assert counts == {r: store.scale("AP@6", rb=r).k for r in range(1, 7)}
    assert not any(line.startswith(("  P@6", "  DCG")) for line in lines)   # no recall base, no counts


def test_verify_gives_a_verdict_per_table(store_path, tmp_path, capsys):
    result = _info(store_path, "--verify")
    assert result.exit_code == 0, result.output
    for name in NAMES:
        assert re.search(rf"^\s*ok\s+{re.escape(name)}$", result.stdout, re.M), result.stdout
    assert "all 3 tables ok" in result.stdout

    bad = tmp_path / "bad.h5"
    shutil.copytree(store_path, bad)
    with h5py.File(table_file(bad, "P@6"), "a") as f:
        counts = f["counts"]
        counts[0] = counts[0] + 1
    result = _info(bad, "--verify")
    assert isinstance(result.exception, IrscaleError)            # the CLI prints it as one line, exit 2
    out = result.stdout
    assert re.search(r"^\s*CORRUPT\s+P@6: checksum mismatch", out, re.M), out
    for name in ("AP@6", "DCG(b=2)@6"):
        assert re.search(rf"^\s*ok\s+{re.escape(name)}$", out, re.M), out
    assert "1 of 3 tables failed verification: P@6" in out

    capsys.readouterr()
    assert main(["info", str(bad), "--verify"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("irscale: error: ") and "P@6" in err[0], captured.err
    assert "--rebuild" in err[0] and "Traceback" not in captured.err
    assert "ok       AP@6" in captured.out and "CORRUPT  P@6" in captured.out
    # the Python API keeps stopping at the first bad table
    with pytest.raises(irscale.errors.StoreError, match="checksum mismatch"):
        irscale.open_store(bad).verify()
    assert [v for v in irscale.open_store(bad).verify_each()] == [
        ("AP@6", None), ("DCG(b=2)@6", None),
        ("P@6", "checksum mismatch (the sha256 of dataset counts differs from its stored digest)")]
