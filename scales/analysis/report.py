"""The markdown report of an analysis (``report.md``): tables with measures in columns,
one paragraph per table saying what changed, spacing statistics and figures.

Every sentence is computed from the numbers it describes; nothing is hard-coded about the
outcome.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from irscale.scales.analysis.analyze import Analysis
from irscale.scales.runs.standardize import DEPENDS_ON_SYSTEMS, REFERENCES

TEST_NAMES = {
    "sign": "sign test", "ranksum": "Wilcoxon rank-sum", "signrank": "Wilcoxon signed-rank",
    "ttest": "paired t-test", "anova1": "one-way ANOVA + Tukey HSD", "anova2": "two-way ANOVA + Tukey HSD",
    "kruskal": "Kruskal-Wallis + Tukey-type", "friedman": "Friedman + Tukey-type",
}


def short(measure: str) -> str:
    """Measure name without its cutoff (tables are per N)."""
    return measure.rsplit("@", 1)[0]


def _fmt(x, digits=4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    return f"{x:.{digits}f}"


def _count(k, word: str) -> str:
    return f"{k} {word}{'' if k == 1 else 's'}"


def _yes_no(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    return str(int(v)) if isinstance(v, (int, float, np.integer, np.floating)) else str(v)


def markdown_table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_fmt(c) if not isinstance(c, str) else c for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _measures(df: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(df["measure"]))


# -- sections -------------------------------------------------------------------------------
def tau_section(tau: pd.DataFrame, n: int) -> str:
    t = tau[tau.n == n]
    modes = sorted(t.rb_scale.unique())
    measures = _measures(t)
    header = ["tie strategy / scaling"] + [short(m) for m in measures]
    rows = []
    for mode in modes:
        for col, label in (("tau_unq", "unq"), ("tau_midrank", "mid-rank")):
            vals = t[t.rb_scale == mode].set_index("measure")[col]
            rows.append([f"{label}, {mode}"] + [vals.get(m, float("nan")) for m in measures])
    text = [f"#### N = {n}: Kendall tau between each measure and its scaled version", "",
            markdown_table(header, rows), ""]
    for mode in modes:
        tm = t[t.rb_scale == mode]
        if tm.tau_unq.isna().all():     # e.g. every system tied: no tau is defined
            text += [f"With the `{mode}` scales no Kendall tau is defined (tied system means).", ""]
            continue
        ones = [short(m) for m, v in zip(tm.measure, tm.tau_unq) if v >= 1 - 1e-12]
        low = tm.loc[tm.tau_unq.idxmin()]
        mid_delta = (tm.tau_midrank - tm.tau_unq).mean()
        if low.tau_unq >= 1 - 1e-12:
            sentence = (f"With the `{mode}` scales, {'every measure keeps' if len(ones) > 1 else ones[0] + ' keeps'} "
                        "tau = 1: scaling does not change the system ranking.")
        elif ones:
            sentence = (f"With the `{mode}` scales, {', '.join(ones)} keep{'s' if len(ones) == 1 else ''} "
                        f"tau = 1 (the system ranking does not change); the largest change is for "
                        f"{short(low.measure)} (tau = {low.tau_unq:.4f}).")
        elif len(tm) == 1:
            sentence = (f"With the `{mode}` scales, scaling changes the system ranking of {short(low.measure)} "
                        f"(tau = {low.tau_unq:.4f}).")
        else:
            sentence = (f"With the `{mode}` scales, scaling changes the system ranking of every measure; the largest "
                        f"change is for {short(low.measure)} (tau = {low.tau_unq:.4f}).")
        if not math.isnan(mid_delta):
            sentence += (f" Mid-rank ties instead of unq change tau by {mid_delta:+.4f} on average "
                         f"(largest difference {(tm.tau_midrank - tm.tau_unq).abs().max():.4f}).")
        text.append(sentence)
        text.append("")
    return "\n".join(text)


def topic_check_section(tau: pd.DataFrame) -> str:
    checked = int(tau.topics_checked.sum())
    constant = int(tau.topics_constant.sum())
    worst = tau.topic_tau_min.min()
    if not checked or math.isnan(worst):
        return (f"Topic-by-topic self-check: there is no (measure, N, scaling, topic) case where the systems do not "
                f"all score the same, so there is nothing to check. {constant} cases have all systems tied on the "
                "topic under both raw and scaled scores.\n")
    return (f"Topic-by-topic self-check: on all {checked} (measure, N, scaling, topic) cases where the systems do "
            f"not all score the same, tau between raw and scaled scores is {worst:.6f} at the lowest (it must be 1 "
            f"by construction; the analysis stops otherwise). {constant} cases have all systems tied on the topic "
            f"under both raw and scaled scores.\n")


def pairs_sentence(pm: pd.DataFrame, tol: float = 1e-12) -> str:
    """What scaling does to the Kendall tau between measures (rows of one N and scaling
    mode: measure_a, measure_b, tau_raw, tau_scaled): how many pairs move towards and away
    from agreement, the pair that moves most each way (only for a way some pair moves), or
    that no pair changes."""
    change = pm.tau_scaled - pm.tau_raw
    defined = change.notna()
    if not defined.any():      # e.g. two systems tied on every measure: no tau is defined
        return "No Kendall tau between measures is defined here (tied system means)."
    left_out = "" if defined.all() else f"; {int((~defined).sum())} without a defined tau, left out"
    pm, change = pm[defined], change[defined]
    total = len(pm)
    up, down = change > tol, change < -tol
    if not up.any() and not down.any():
        kept = ("the one pair of measures keeps its tau" if total == 1 else
                f"all {total} pairs of measures keep their tau")
        return f"Scaling changes no Kendall tau between measures: {kept}{left_out}."

    def most(mask, largest: bool) -> str:
        moved = change[mask]
        at = moved.idxmax() if largest else moved.idxmin()
        r = pm.loc[at]
        tied = int((abs(moved - moved[at]) <= tol).sum()) - 1
        return (f"{short(r.measure_a)} – {short(r.measure_b)} ({r.tau_raw:.4f} → {r.tau_scaled:.4f})"
                + (f", tied with {tied} other pair{'s' if tied > 1 else ''}" if tied else ""))

    n_up, n_down = int(up.sum()), int(down.sum())
    counts = [f"{k} {what}" for k, what in ((n_up, "towards agreement"), (n_down, "away from agreement"),
                                            (total - n_up - n_down, "unchanged")) if k]
    parts = []
    if n_up:
        parts.append(f"{'most ' if n_up > 1 else ''}towards agreement for {most(up, True)}")
    if n_down:
        parts.append(f"{'most ' if n_down > 1 else ''}away from {'it' if n_up else 'agreement'} for "
                     f"{most(down, False)}")
    return (f"Scaling changes the agreement between measures by {change.abs().mean():.4f} on average "
            f"(pairs of measures: {', '.join(counts)}{left_out}); " + "; ".join(parts) + ".")


def measure_pairs_section(pairs: pd.DataFrame, n: int) -> str:
    """Per scaling mode, a matrix with measures in rows and columns: above the diagonal
    tau on raw means -> tau on scaled means, below it Delta%."""
    if pairs.empty or "n" not in pairs.columns:
        return ""
    p = pairs[pairs.n == n]
    text = []
    for mode in sorted(p.rb_scale.unique()):
        pm = p[p.rb_scale == mode]
        measures = list(dict.fromkeys(list(pm.measure_a) + list(pm.measure_b)))
        index = {m: i for i, m in enumerate(measures)}
        cells = [["–"] * len(measures) for _ in measures]
        for r in pm.itertuples():
            a, b = index[r.measure_a], index[r.measure_b]
            cells[min(a, b)][max(a, b)] = f"{r.tau_raw:.3f} → {r.tau_scaled:.3f}"
            cells[max(a, b)][min(a, b)] = f"{r.delta_pct:+.1f}%"
        rows = [[short(m)] + cells[i] for i, m in enumerate(measures)]
        text += [f"#### N = {n}, `{mode}` scales: Kendall tau between measures "
                 "(above the diagonal: raw → scaled; below: Δ%)", "",
                 markdown_table([""] + [short(m) for m in measures], rows), ""]
        text += [pairs_sentence(pm), ""]
    return "\n".join(text)


def significance_section(sig: pd.DataFrame, n: int, mode: str) -> str:
    s = sig[(sig.n == n) & (sig.rb_scale == mode)]
    if s.empty:
        return ""
    measures = _measures(s)
    header = ["test", ""] + [short(m) for m in measures]
    rows = []
    for test in dict.fromkeys(s.test):
        st = s[s.test == test].set_index("measure")
        for col, label in (("sig", "Sig"), ("s2ns", "S2NS"), ("ns2s", "NS2S"), ("delta_pct", "Δ%")):
            rows.append([TEST_NAMES.get(test, test) if label == "Sig" else "", label]
                        + [_fmt(st[col].get(m), 2) if col == "delta_pct" else int(st[col].get(m)) for m in measures])
    pairs = int(s.pairs.iat[0])
    text = [f"#### N = {n}, `{mode}` scales: significance tests on {_count(pairs, 'system pair')} (α = 0.05)", "",
            markdown_table(header, rows), ""]
    changed = s[(s.s2ns + s.ns2s) > 0]
    unchanged_measures = [short(m) for m in measures if (s[s.measure == m].s2ns + s[s.measure == m].ns2s).sum() == 0]
    unchanged_tests = [TEST_NAMES.get(t, t) for t in dict.fromkeys(s.test)
                       if (s[s.test == t].s2ns + s[s.test == t].ns2s).sum() == 0]
    if changed.empty:
        text.append(f"No test changes any decision for any measure: scaling leaves every (test, measure) cell as "
                    f"it is ({_count(len(s), 'cell')}, {_count(int(s.sig.sum()), 'significant system pair')} "
                    "in all).")
        text.append("")
        return "\n".join(text)
    sentence = (f"{len(changed)} of {len(s)} (test, measure) cells change at least one decision. "
                f"No decision changes for {', '.join(unchanged_measures) or 'no measure'} under any test, and "
                f"{', '.join(unchanged_tests) or 'no test'} never change{'s' if len(unchanged_tests) == 1 else ''} "
                "for any measure.")
    relative = changed[changed.delta_pct.notna()]
    if not relative.empty:
        most = relative.loc[relative.delta_pct.idxmax()]
        sentence += (f" The largest relative change is {most.delta_pct:.2f}% ({short(most.measure)}, "
                     f"{TEST_NAMES.get(most.test, most.test)}: {int(most.s2ns)} pairs lose significance, "
                     f"{int(most.ns2s)} gain it, of {int(most.sig)}).")
    gained = changed[changed.delta_pct.isna()]        # no significant pair under the raw scores
    if not gained.empty:
        sentence += (f" {len(gained)} cell(s) had no significant pair under the raw scores and gain "
                     f"{int(gained.ns2s.sum())} in all.")
    text.append(sentence)
    text.append("")
    return "\n".join(text)


def modes_section(tau: pd.DataFrame, sig: pd.DataFrame) -> str:
    """Where the common (paper) and feasible scalings differ."""
    if set(tau.rb_scale) != {"common", "feasible"}:
        only = ", ".join(f"`{m}`" for m in sorted(tau.rb_scale.unique()))
        return (f"Only the {only} scales were analysed (transform with both `--rb-scale common` and "
                "`--rb-scale feasible` and analyse the scores together to compare them).\n")
    rows = []
    for n in sorted(tau.n.unique()):
        t = tau[tau.n == n].pivot(index="measure", columns="rb_scale", values="tau_unq")
        if sig.empty:
            s = pd.DataFrame()
        else:
            s = sig[sig.n == n].assign(changes=lambda d: d.s2ns + d.ns2s)
            s = s.pivot_table(index="measure", columns="rb_scale", values="changes", aggfunc="sum")
        if not s.empty and not {"common", "feasible"} <= set(s.columns):
            s = pd.DataFrame()
        both = tau[tau.n == n].groupby("measure").rb_scale.nunique()
        for m in _measures(tau[tau.n == n]):
            if both[m] < 2 or (not s.empty and m not in s.index):
                continue        # the measure under one scaling only: nothing to compare
            if abs(t.loc[m, "common"] - t.loc[m, "feasible"]) > 1e-12 or (
                    not s.empty and s.loc[m, "common"] != s.loc[m, "feasible"]):
                rows.append([str(n), short(m), t.loc[m, "common"], t.loc[m, "feasible"],
                             int(s.loc[m, "common"]) if not s.empty else "–",
                             int(s.loc[m, "feasible"]) if not s.empty else "–"])
    if not rows:
        return "The `common` and `feasible` scales give the same results for every measure.\n"
    header = ["N", "measure", "tau unq, common", "tau unq, feasible", "changed decisions, common",
              "changed decisions, feasible"]
    differ = sorted({r[1] for r in rows})
    return ("Only RB-dependent measures can differ between the two scalings; these rows differ:\n\n"
            + markdown_table(header, rows)
            + f"\n\nThe measures whose results depend on the scaling: {', '.join(differ)}. The `common` scaling (the "
              "original paper's) puts every topic on the scale of RB ≥ N; `feasible` scales each topic over the "
              "runs that can occur for its recall base, which is the proper interval scale per topic.\n")


def spacing_section(spacing: list[dict], order: list[str] | None = None) -> str:
    if not spacing:
        return ""
    df = pd.DataFrame(spacing)
    if order:   # the analysis' measure order (paper order), other tables after
        rank = {m: i for i, m in enumerate(order)}
        df = df.assign(_o=df.measure.map(lambda m: rank.get(m, len(rank)))).sort_values(["n", "_o"], kind="stable")
    # a table of one per-grade count vector is named with its vector (a measure may have several)
    vector = df["table"] if "table" in df.columns else pd.Series([None] * len(df), index=df.index)
    df = df.assign(_label=[short(m) + (f" rb={t.rsplit(' rb=', 1)[1]}" if isinstance(t, str) and " rb=" in t else "")
                           for m, t in zip(df.measure, vector)])
    text = []
    for n in sorted(df.n.unique()):
        d = df[df.n == n]
        labels = list(d._label)
        header = ["statistic"] + labels
        stats = [("n_distinct", "distinct values K"), ("uncovered", "uncovered share of [min, max]"),
                 ("gap_cv", "CV of gaps"), ("max_deviation", "max deviation from equal spacing"),
                 ("mean_abs_deviation", "mean deviation from equal spacing")]
        rows = [[label] + [r.get(key, float("nan")) for _, r in d.iterrows()]
                for key, label in stats if key in d.columns]
        for key, label in (("axiom_holds", "axiom holds (exhaustive)"), ("balancing_index", "balancing index B(N)"),
                           ("equal_spacing", "equally spaced (exact)")):
            if key in d.columns:
                rows.append([label] + [_yes_no(r.get(key)) for _, r in d.iterrows()])
        named = ", or at the per-grade counts named" if any(" rb=" in x for x in labels) else ""
        text += [f"#### N = {n}: spacing of the values (RB-dependent measures at RB = N{named})", "",
                 markdown_table(header, rows), ""]
        if "max_deviation" in d.columns:
            eq = [x for x, v in zip(labels, d.max_deviation) if v < 1e-9]
            far = d.loc[d.max_deviation.idxmax()]
            text.append(f"Equally spaced already: {', '.join(eq) or 'none'}; furthest from equal spacing: "
                        f"{far._label} (max deviation {far.max_deviation:.4f} of the range).")
            text.append("")
    return "\n".join(text)



# -- transforms compared -------------------------------------------------------------------
def _rows_of(frame: pd.DataFrame, n: int, mode: str) -> pd.DataFrame:
    """The rows of one cutoff and scaling mode (an empty frame has no columns to select on)."""
    return frame if frame.empty else frame[(frame.n == n) & (frame.rb_scale == mode)]


def _pct(x) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}%"


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
                + (f"a reference set of {_count(reference, 'run')}"
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
            rows.append([f"`{t}`"] + [f"{_pct(dt.cells_changed[m] / dt.cells[m])} ({int(dt.runs_changed[m])} runs)"
                                      for m in measures])
        rows.append(["run removed"] + [str(removed[m]) for m in measures])
        text += [f"#### N = {n}, `{mode}` scales: share of the other runs' per-topic scores that change when one "
                 "run is removed", "", markdown_table(["transform"] + [short(m) for m in measures], rows), ""]
        changed = d[d.cells_changed > 0]
        stable = [t for t in dict.fromkeys(d["transform"]) if (d[d["transform"] == t].cells_changed == 0).all()]
        sentence = (f"Removing the run changes no other run's score under {', '.join(f'`{t}`' for t in stable)}"
                    if stable else "Every transform changes some other run's score when the run is removed")
        if not changed.empty:
            share = _pct((changed.cells_changed / changed.cells).max())
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
    c = _rows_of(analysis.conclusions, n, mode)
    if c.empty:
        return ""
    transforms = analysis.meta.get("transforms") or []
    measures = _measures(c)
    pairs = int(c.pairs.iat[0])
    rows = []
    for test in dict.fromkeys(c.test):
        ct = c[c.test == test].set_index("measure")
        rows.append([TEST_NAMES.get(test, test)] + [_pct(ct.scale_free_share.get(m)) for m in measures])
    total = c.groupby("measure", sort=False)[["scale_free", "pairs"]].sum()
    rows.append(["all tests"] + [_pct(total.scale_free[m] / total.pairs[m]) for m in measures])
    if len(transforms) < 2:
        return (f"Only `{transforms[0] if transforms else 'raw'}` was asked for: there is no other transform to "
                "compare decisions with.\n")
    text = [f"#### N = {n}, `{mode}` scales: share of scale-free decisions ({_count(pairs, 'system pair')} per "
            f"test; a decision is scale-free when all {len(transforms)} transforms give it)", "",
            markdown_table(["test"] + [short(m) for m in measures], rows), ""]
    flips = [[f"`{t}`"] + [int(c[c.measure == m][f"changed_{t}"].sum()) for m in measures]
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
                    f"{TEST_NAMES.get(low.test, low.test)} ({_pct(low.scale_free_share)} of the pairs keep their "
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
    t = _rows_of(analysis.transform_taus, n, mode)
    if t.empty:
        return ""
    measures = _measures(t)
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
    inf = _rows_of(analysis.inference, n, mode)
    if inf.empty:
        return ""
    meta = analysis.meta
    measures = _measures(inf)
    family = int(inf.pairs.iat[0])
    rows = []
    for key, label in INFERENCE_ROWS:
        if key not in inf.columns or inf[key].isna().all():
            continue
        for pos, t in enumerate(dict.fromkeys(inf["transform"])):
            v = inf[inf["transform"] == t].set_index("measure")[key]
            rows.append([label if pos == 0 else "", f"`{t}`"]
                        + [_fmt(v.get(m), 3) if key.startswith("median") else int(v.get(m)) for m in measures])
    base = meta.get("baseline")
    what = (f"the {family} comparisons with the baseline `{base}`" if base else
            f"all {_count(family, 'system pair')}")
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


def default_title(analysis: Analysis) -> str:
    """The report's title when none is given: what was analysed, from the analysis' meta
    (the scores files' names when known, the numbers of runs and topics)."""
    meta = analysis.meta
    sources = [str(x) for x in meta.get("sources") or []]
    what = ""
    if sources:
        what = " of " + (", ".join(sources) if len(sources) <= 3 else
                         f"{', '.join(sources[:2])} and {len(sources) - 2} more files")
    counts = [_count(meta[key], word) for key, word in (("runs", "run"), ("topics", "topic")) if key in meta]
    return f"Interval-scale analysis{what}" + (f": {', '.join(counts)}" if counts else "")


def write_report(analysis: Analysis, folder: str | Path, spacing: list[dict] | None = None,
                 figures: list[tuple[str, str]] | None = None, title: str | None = None,
                 preamble: str = "") -> Path:
    """Write ``report.md`` into ``folder`` (figures given as (caption, relative path)).
    ``title`` defaults to :func:`default_title` (the scores files, runs and topics)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tau, pairs, sig = analysis.tau_scaled, analysis.tau_measures, analysis.significance
    ns = sorted(tau.n.unique())
    meta = analysis.meta
    out = [f"# {title if title else default_title(analysis)}", ""]
    if preamble:
        out += [preamble, ""]
    runs = _count(meta["runs"], "system") if "runs" in meta else "? systems"
    topics = _count(meta["topics"], "topic") if "topics" in meta else "? topics"
    out += [f"{runs}, {topics}, cutoff{'s' if len(ns) != 1 else ''} N = "
            f"{', '.join(map(str, ns))}, scaling{'s' if tau.rb_scale.nunique() != 1 else ''}: "
            f"{', '.join(sorted(tau.rb_scale.unique()))}. Analysis time {analysis.seconds:.0f} s.", ""]
    out += ["## 1. Each measure against its interval-scaled version", ""]
    for n in ns:
        out.append(tau_section(tau, n))
    out += ["## 2. Topic-by-topic self-check", "", topic_check_section(tau)]
    out += ["## 3. Measure against measure", ""]
    for n in ns:
        measures = _measures(tau[tau.n == n])
        if len(measures) < 2:
            out += [f"Only one measure at N = {n} ({short(measures[0])}): there is no pair of measures to "
                    "compare.", ""]
        else:
            out.append(measure_pairs_section(pairs, n))
    out += ["## 4. Significance tests", ""]
    if sig.empty:
        out += ["No significance tests were run.", ""]
    for n in ns if not sig.empty else ():
        for mode in sorted(sig[sig.n == n].rb_scale.unique()):
            out.append(significance_section(sig, n, mode))
    out += ["## 5. Where `common` and `feasible` differ", "", modes_section(tau, sig)]
    if spacing:
        out += ["## 6. Spacing of the measures' values", "", spacing_section(spacing, _measures(tau))]
    if not analysis.conclusions.empty or not analysis.inference.empty:
        groups = sorted({(int(r.n), r.rb_scale) for r in analysis.inference[["n", "rb_scale"]].itertuples()})
        out += ["## 7. Transforms: interval scales and standardisations side by side", "",
                transforms_section(analysis)]
        out += ["## 8. Which conclusions survive the choice of transform", ""]
        for n, mode in groups:
            out += [conclusions_section(analysis, n, mode), transform_taus_section(analysis, n, mode)]
        out += ["## 9. Corrections, randomised Tukey HSD, effect sizes and bootstrap intervals", ""]
        for n, mode in groups:
            out.append(inference_section(analysis, n, mode))
    if figures:
        out += ["## Figures", ""]
        for caption, path in figures:
            out += [f"![{caption}]({path})", "", f"*{caption}*", ""]
    path = folder / "report.md"
    path.write_text("\n".join(out))
    return path
