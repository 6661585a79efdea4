"""store.format.TableInfo: a table's metadata decoded and type-checked once."""
import json

import pytest

import irscale
from irscale.store.format import TableInfo, int_attr


@pytest.fixture(scope="module")
def listed(tmp_path_factory):
    path = tmp_path_factory.mktemp("info") / "s"
    irscale.build_store(path, "AP@6,nDCG(b=2,gains=(0,1,2))@5", n_jobs=1, rb_counts=[(2, 3)])
    return {t.name: t for t in irscale.open_store(path).tables()}


def test_fields_typed_and_mapping_kept(listed):
    ap = listed["AP@6"]
    assert ap.n_runs == 2 ** 6 and ap.rel == (0, 1) and ap.params == {} and ap.rb_counts is None
    assert ap.distinct_by_rb and len(ap.distinct_by_rb) == 6 and ap.layout in ("entries", "implicit")
    graded = listed["nDCG(b=2,gains=(0,1,2))@5 rb=(2,3)"]
    assert graded.rb_counts == (2, 3) and graded.rel == (0, 1, 2) and graded.params["gains"] == [0, 1, 2]
    assert ap["n_runs"] == ap.n_runs and ap["digests"] == ap.attrs["digests"] and "digests" in ap
    doc = json.loads(json.dumps(ap.to_json()))
    assert doc["rel"] == [0, 1] and isinstance(doc["digests"], dict) and "attrs" not in doc


@pytest.mark.parametrize("value", [0, 2 ** 63 - 1, 2 ** 63, 2 ** 1000, -5])
def test_integers_of_any_size(listed, value):
    attrs = dict(listed["AP@6"].attrs, n_runs=int_attr(value))
    assert TableInfo.from_attrs(attrs).n_runs == value
    assert isinstance(int_attr(value), int) == (abs(value) < 2 ** 63)


@pytest.mark.parametrize("key, bad", [("n_runs", "12x"), ("n_runs", 1.5), ("n_runs", True), ("rel", "{}"),
                                      ("rb_counts", "[1, \"a\"]"), ("params", "[]"), ("measure", 3),
                                      ("error_bound", "0.1"), ("distinct_by_rb", "not json")])
def test_wrong_types_refused(listed, key, bad):
    with pytest.raises(ValueError):
        TableInfo.from_attrs(dict(listed["AP@6"].attrs, **{key: bad}))
