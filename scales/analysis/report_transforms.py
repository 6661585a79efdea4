"""Sections 7-9 of the analysis report: the transforms side by side
(:mod:`.transforms_compared`), which conclusions survive the choice of transform, and the
inference under each transform. Every sentence is computed from the numbers it describes."""
from __future__ import annotations

import pandas as pd

from irscale.scales.analysis.analyze import Analysis
from irscale.scales.analysis.report_format import (
    TEST_NAMES,
    count,
    fmt,
    int_or_dash,
    markdown_table,
    measures_of,
    pct,
    rows_of,
    short,
)
from irscale.scales.runs.standardize import DEPENDS_ON_SYSTEMS, REFERENCES


def _compared(analysis: Analysis, n: int, mode: str) -> dict[str, list[str]]:
    """The transforms each measure was compared under at one cutoff and scaling mode (all
    of the analysis' transforms, or fewer for a measure without scaled values or
    mid-ranks), in the analysis' order."""
    inf = rows_of(analysis.inference, n, mode)
    order = analysis.meta.get("transforms") or []
    return {} if inf.empty else {m: [t for t in order if t in set(g["transform"])]
                                 for m, g in inf.groupby("measure", sort=False)}


def _fewer_sentence(compared: dict[str, list[str]], present: list[str]) -> str:
    """Which measures were compared under fewer transforms, and under which."""
    by: dict = {}
    for m, ts in compared.items():
        if len(ts) < len(present):
            by.setdefault(tuple(ts), []).append(short(m))
    return " ".join(f"{', '.join(ms)} {'is' if len(ms) == 1 else 'are'} compared under "
                    f"{', '.join(f'`{t}`' for t in ts)} only (see *Left out* at the top): "
                    f"{'its' if len(ms) == 1 else 'their'} decisions are scale-free when these {len(ts)} agree."
                    for ts, ms in by.items())


def transforms_section(analysis: Analysis) -> str:
    """What each transform is, whether it depends on the set of systems, and what removing
    one run does to the other runs' scores (measures in columns)."""
    dep = analysis.set_dependence
    transforms = analysis.meta.get("transforms") or []
    text = [markdown_table(["transform", "depends on the set of systems", "definition"],
                           [[f"`{t}`", "yes" if DEPENDS_ON_SYSTEMS[t] else "no", REFERENCES[t]] for t in transforms]),
            ""]
    reference = analysis.meta.get("reference_runs")
    among = analysis.meta.get("reference_runs_analysed") or 0
    text.append("The standardisations are computed per topic against "
                + (f"a reference set of {count(reference, 'run')}"
                   + (f" ({among} of them among the runs analysed)" if among else " (none of them analysed)")
                   if reference else "the runs analysed")
                + (", each run's ECDF without its own score (leave-one-out)"
                   if analysis.meta.get("leave_one_out") and "ecdf" in transforms else "") + ".")
    text.append("")
    if dep.empty:
        return "\n".join(text + ["With fewer than 3 runs no run can be removed to show the set dependence.", ""])
    for (n, mode), d in dep.groupby(["n", "rb_scale"], sort=True):
        measures = list(dict.fromkeys(d.measure))
        removed = d.drop_duplicates("measure").set_index("measure").removed_run
        rows = []
        for t in dict.fromkeys(d["transform"]):
            dt = d[d["transform"] == t].set_index("measure")
            rows.append([f"`{t}`"] + [f"{pct(dt.cells_changed[m] / dt.cells[m])} ({int(dt.runs_changed[m])} runs)"
                                      if m in dt.index else "–" for m in measures])
        rows.append(["run removed"] + [str(removed[m]) for m in measures])
        text += [f"#### N = {n}, `{mode}` scales: share of the other runs' per-topic scores that change when one "
                 "run is removed", "", markdown_table(["transform"] + [short(m) for m in measures], rows), ""]
        changed = d[d.cells_changed > 0]
        stable = [t for t in dict.fromkeys(d["transform"]) if (d[d["transform"] == t].cells_changed == 0).all()]
        sentence = (f"Removing the run changes no other run's score under {', '.join(f'`{t}`' for t in stable)}"
                    if stable else "Every transform changes some other run's score when the run is removed")
        if not changed.empty:
            share = pct((changed.cells_changed / changed.cells).max())
            sentence += f"; under the others it changes up to {share} of them"
            moved = changed[changed.tau_means_after < 1 - 1e-12]
            if not moved.empty:
                worst = moved.loc[moved.tau_means_after.idxmin()]
                sentence += (f", and the order of the other runs by mean moves most under `{worst['transform']}` for "
                             f"{short(worst.measure)} (Kendall tau {worst.tau_means_after:.4f} between the orderings "
                             "before and after)")
            else:
                sentence += ", without changing the order of the other runs by mean"
        text += [sentence + ".", ""]
    return "\n".join(text)


def conclusions_section(analysis: Analysis, n: int, mode: str) -> str:
    """Share of scale-free decisions per test and measure, decisions changed per
    transform, and the sign/Friedman check."""
    if analysis.conclusions.empty:
        return "No significance tests were run: there are no decisions to compare.\n"
    c = rows_of(analysis.conclusions, n, mode)
    if c.empty:
        return ""
    transforms = analysis.meta.get("transforms") or []
    measures = measures_of(c)
    pairs = int(c.pairs.iat[0])
    rows = []
    for test in dict.fromkeys(c.test):
        ct = c[c.test == test].set_index("measure")
        rows.append([TEST_NAMES.get(test, test)] + [pct(ct.scale_free_share.get(m)) for m in measures])
    total = c.groupby("measure", sort=False)[["scale_free", "pairs"]].sum()
    rows.append(["all tests"] + [pct(total.scale_free[m] / total.pairs[m]) for m in measures])
    if len(transforms) < 2:
        return (f"Only `{transforms[0] if transforms else 'raw'}` was asked for: there is no other transform to "
                "compare decisions with.\n")
    compared = _compared(analysis, n, mode)
    transforms = [t for t in transforms if any(t in ts for ts in compared.values())] or transforms
    text = [f"#### N = {n}, `{mode}` scales: share of scale-free decisions ({count(pairs, 'system pair')} per "
            f"test; a decision is scale-free when all {len(transforms)} transforms give it)", "",
            markdown_table(["test"] + [short(m) for m in measures], rows), ""]
    fewer = _fewer_sentence(compared, transforms)
    if fewer:
        text += [fewer, ""]
    flips = [[f"`{t}`"] + [int(c[c.measure == m][f"changed_{t}"].sum()) if t in compared.get(m, transforms)
                           else "–" for m in measures]
             for t in transforms[1:] if f"changed_{t}" in c.columns]
    if flips:
        text += ["Decisions (over all tests) that differ from the raw scores' decision, per transform:", "",
                 markdown_table(["transform"] + [short(m) for m in measures], flips), ""]
    order = c[c.order_only]
    inf = analysis.inference
    keeps = inf[(inf.n == n) & (inf.rb_scale == mode)].groupby("transform").keeps_topic_order.all() \
        if not inf.empty else pd.Series(dtype=bool)
    keeping = [t for t in transforms if keeps.get(t, False)]
    if not order.empty:
        free = int(order.scale_free.sum())
        names = " and ".join(TEST_NAMES[t] for t in dict.fromkeys(order.test))
        losing = [t for t in transforms if t not in keeping]
        sentence = (f"The sign test and Friedman's test read only the order of the scores within each topic, so a "
                    f"transform that keeps that order cannot change their decisions: they are scale-free by "
                    f"construction. Here {', '.join(f'`{t}`' for t in keeping)} keep the order on every topic of every "
                    "measure")
        if losing:
            sentence += (f"; {', '.join(f'`{t}`' for t in losing)} do{'es' if len(losing) == 1 else ''} not (a "
                         "reference of other runs can merge different scores, and the normal CDF of z-scores rounds to "
                         "1 beyond z = 8.3), so their decisions may differ")
        sentence += (f". Checked: {free} of {int(order.pairs.sum())} decisions of the {names} are equal under every "
                     "transform.")
        text += [sentence, ""]
    other = c[~c.order_only]
    if not other.empty and (other.scale_free < other.pairs).any():
        low = other.loc[other.scale_free_share.idxmin()]
        sums = {t: int(c[f"changed_{t}"].sum()) for t in transforms[1:] if f"changed_{t}" in c.columns}
        most = max(sums, key=sums.get) if sums else None
        sentence = (f"The least scale-free cell is {short(low.measure)} with the "
                    f"{TEST_NAMES.get(low.test, low.test)} ({pct(low.scale_free_share)} of the pairs keep their "
                    "decision under every transform)")
        if most is not None and sums[most]:
            sentence += f"; `{most}` changes the most decisions relative to the raw scores ({sums[most]} in all)"
        text += [sentence + ".", ""]
    elif not other.empty:
        text += ["Every decision of every other test is scale-free here: all transforms give it.", ""]
    return "\n".join(text)


def transform_taus_section(analysis: Analysis, n: int, mode: str) -> str:
    """Kendall tau between the system orderings of every two transforms (measures in
    columns)."""
    t = rows_of(analysis.transform_taus, n, mode)
    if t.empty:
        return ""
    measures = measures_of(t)
    rows = []
    for (a, b), g in t.groupby(["transform_a", "transform_b"], sort=False):
        v = g.set_index("measure").tau
        rows.append([f"`{a}` – `{b}`"] + [v.get(m, float("nan")) for m in measures])
    low = t.loc[t.tau.idxmin()] if t.tau.notna().any() else None
    text = [f"#### N = {n}, `{mode}` scales: Kendall tau between the system orderings (by mean) of two transforms",
            "", markdown_table(["transforms"] + [short(m) for m in measures], rows), ""]
    if low is not None and low.tau < 1 - 1e-12:
        text += [f"The orderings differ most between `{low.transform_a}` and `{low.transform_b}` for "
                 f"{short(low.measure)} (tau = {low.tau:.4f}).", ""]
    elif low is not None:
        text += ["Every transform orders the systems the same way here.", ""]
    else:
        text += ["No Kendall tau is defined here (tied system means).", ""]
    return "\n".join(text)


INFERENCE_ROWS = (("ttest", "t-test"), ("ttest_holm", "t-test, Holm"), ("ttest_bh", "t-test, BH"),
                  ("signrank_holm", "signed-rank, Holm"), ("sign_holm", "sign test, Holm"),
                  ("tukey_randomised", "randomised Tukey HSD"), ("ci_excludes_0", "bootstrap CI excludes 0"),
                  ("median_abs_d", "median abs. Cohen's d"), ("median_abs_glass", "median abs. Glass's delta"))


def inference_section(analysis: Analysis, n: int, mode: str) -> str:
    """Significant pairs under corrections, randomised Tukey HSD, bootstrap intervals and
    effect sizes, one block per statistic with transforms in rows and measures in
    columns."""
    inf = rows_of(analysis.inference, n, mode)
    if inf.empty:
        return ""
    meta = analysis.meta
    measures = measures_of(inf)
    family = int(inf.pairs.iat[0])
    rows = []
    for key, label in INFERENCE_ROWS:
        if key not in inf.columns or inf[key].isna().all():
            continue
        for pos, t in enumerate(dict.fromkeys(inf["transform"])):
            v = inf[inf["transform"] == t].set_index("measure")[key]
            rows.append([label if pos == 0 else "", f"`{t}`"]
                        + [fmt(v.get(m), 3) if key.startswith("median") else int_or_dash(v.get(m)) for m in measures])
    base = meta.get("baseline")
    what = (f"the {family} comparisons with the baseline `{base}`" if base else
            f"all {count(family, 'system pair')}")
    text = [f"#### N = {n}, `{mode}` scales: significant pairs (α = {meta.get('alpha', 0.05)}) and effect sizes over "
            f"{what}", "", markdown_table(["statistic", "transform"] + [short(m) for m in measures], rows), ""]
    raw = inf[inf["transform"] == "raw"]
    if {"ttest", "ttest_holm", "ttest_bh"} <= set(inf.columns) and not raw.empty:
        text.append(f"Over the raw scores, Holm keeps {int(raw.ttest_holm.sum())} and Benjamini-Hochberg "
                    f"{int(raw.ttest_bh.sum())} of the {int(raw.ttest.sum())} pairs the uncorrected t-test finds "
                    f"significant (all measures together)"
                    + (f"; the randomised Tukey HSD test ({meta.get('permutations')} permutations) finds "
                       f"{int(raw.tukey_randomised.sum())}" if "tukey_randomised" in raw.columns else "")
                    + (f"; {int(raw.ci_excludes_0.sum())} paired bootstrap {meta.get('confidence', 0.95):.0%} "
                       f"intervals ({meta.get('resamples')} resamples) exclude 0" if "ci_excludes_0" in raw.columns
                       else "") + ".")
        text.append("")
    return "\n".join(text)
