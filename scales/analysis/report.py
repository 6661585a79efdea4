"""The markdown report of an analysis (``report.md``): tables with measures in columns,
one paragraph per table saying what changed, what was left out and why, spacing
statistics and figures (sections 7-9, the transforms side by side, in
:mod:`.report_transforms`; shared formatting in :mod:`.report_format`).

Every sentence is computed from the numbers it describes; nothing is hard-coded about the
outcome.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from irscale.scales.analysis.analyze import Analysis
from irscale.scales.analysis.report_format import TEST_NAMES, count, fmt, markdown_table, measures_of, short, yes_no
from irscale.scales.analysis.report_transforms import (
    conclusions_section,
    inference_section,
    transform_taus_section,
    transforms_section,
)


# -- sections -------------------------------------------------------------------------------
def tau_section(tau: pd.DataFrame, n: int) -> str:
    t = tau[tau.n == n]
    modes = sorted(t.rb_scale.unique())
    measures = measures_of(t)
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
    measures = measures_of(s)
    header = ["test", ""] + [short(m) for m in measures]
    rows = []
    for test in dict.fromkeys(s.test):
        st = s[s.test == test].set_index("measure")
        for col, label in (("sig", "Sig"), ("s2ns", "S2NS"), ("ns2s", "NS2S"), ("delta_pct", "Δ%")):
            rows.append([TEST_NAMES.get(test, test) if label == "Sig" else "", label]
                        + [fmt(st[col].get(m), 2) if col == "delta_pct" else int(st[col].get(m)) for m in measures])
    pairs = int(s.pairs.iat[0])
    text = [f"#### N = {n}, `{mode}` scales: significance tests on {count(pairs, 'system pair')} (α = 0.05)", "",
            markdown_table(header, rows), ""]
    changed = s[(s.s2ns + s.ns2s) > 0]
    unchanged_measures = [short(m) for m in measures if (s[s.measure == m].s2ns + s[s.measure == m].ns2s).sum() == 0]
    unchanged_tests = [TEST_NAMES.get(t, t) for t in dict.fromkeys(s.test)
                       if (s[s.test == t].s2ns + s[s.test == t].ns2s).sum() == 0]
    if changed.empty:
        text.append(f"No test changes any decision for any measure: scaling leaves every (test, measure) cell as "
                    f"it is ({count(len(s), 'cell')}, {count(int(s.sig.sum()), 'significant system pair')} "
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
        for m in measures_of(tau[tau.n == n]):
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
                rows.append([label] + [yes_no(r.get(key)) for _, r in d.iterrows()])
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


def left_out_section(analysis: Analysis) -> str:
    """Which measures the analysis left out of what, and why (``meta["left_out"]``: no
    scaled values, or no mid-ranks), one sentence per kind of omission; empty when none."""
    meta = analysis.meta
    transforms = meta.get("transforms") or []
    inf = analysis.inference
    groups: dict = {}
    for r in meta.get("left_out") or []:
        under = ()
        if not inf.empty:
            g = inf[(inf.measure == r["measure"]) & inf.rb_scale.isin(r["rb_scale"])]
            under = tuple(t for t in transforms if t in set(g["transform"]))
        groups.setdefault((r["lacks"], r["reason"], under), []).append(r["name"])
    text = []
    for (lacks, reason, under), names in groups.items():
        one = len(names) == 1
        who = f"{', '.join(names)} {'has' if one else 'have'}"
        if lacks == "scaled":
            sentence = (f"{who} no scaled values ({reason}): {'its' if one else 'their'} `scaled` column is empty, "
                        f"so {'it is' if one else 'they are'} not in sections 1–5, which set each measure against "
                        "its interval-scaled version")
            if transforms:
                sentence += (f"; sections 7–9 compare {'it' if one else 'them'} under "
                             f"{', '.join(f'`{t}`' for t in under)} only" if under else
                             ", nor in sections 7–9 (of the transforms asked for, only `raw` applies without a scale)")
        elif lacks == "topics":
            sentence = (f"{', '.join(names)} {'is' if one else 'are'} not analysed at all ({reason}): the analyses "
                        "need at least 2 topics with scores")
        else:
            sentence = (f"{who} no mid-ranks ({reason}): {'its' if one else 'their'} mid-rank rows in section 1 are "
                        "empty")
            if "midrank" in transforms:
                sentence += f", and sections 7–9 compare {'it' if one else 'them'} without `midrank`"
        text.append(sentence + ".")
    return "**Left out.** " + " ".join(text) if text else ""


def default_title(analysis: Analysis) -> str:
    """The report's title when none is given: what was analysed, from the analysis' meta
    (the scores files' names when known, the numbers of runs and topics)."""
    meta = analysis.meta
    sources = [str(x) for x in meta.get("sources") or []]
    what = ""
    if sources:
        what = " of " + (", ".join(sources) if len(sources) <= 3 else
                         f"{', '.join(sources[:2])} and {len(sources) - 2} more files")
    counts = [count(meta[key], word) for key, word in (("runs", "run"), ("topics", "topic")) if key in meta]
    return f"Interval-scale analysis{what}" + (f": {', '.join(counts)}" if counts else "")


def write_report(analysis: Analysis, folder: str | Path, spacing: list[dict] | None = None,
                 figures: list[tuple] | None = None, title: str | None = None,
                 preamble: str = "") -> Path:
    """Write ``report.md`` into ``folder`` (figures given as (caption, relative path) or
    (caption, relative path, note): the note, a paragraph saying what the figure shows or
    leaves out, follows the figure; with path None only the note is written, for a figure
    left out). ``title`` defaults to :func:`default_title` (the scores files, runs and
    topics)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tau, pairs, sig = analysis.tau_scaled, analysis.tau_measures, analysis.significance
    ns = sorted(tau.n.unique())
    meta = analysis.meta
    out = [f"# {title if title else default_title(analysis)}", ""]
    if preamble:
        out += [preamble, ""]
    runs = count(meta["runs"], "system") if "runs" in meta else "? systems"
    topics = count(meta["topics"], "topic") if "topics" in meta else "? topics"
    every_n = sorted(set(ns) | (set() if analysis.inference.empty else set(analysis.inference.n)))
    out += [f"{runs}, {topics}, cutoff{'s' if len(every_n) != 1 else ''} N = "
            f"{', '.join(map(str, every_n))}, scaling{'s' if tau.rb_scale.nunique() != 1 else ''}: "
            f"{', '.join(sorted(tau.rb_scale.unique()))}. Analysis time {analysis.seconds:.0f} s.", ""]
    left_out = left_out_section(analysis)
    if left_out:
        out += [left_out, ""]
    out += ["## 1. Each measure against its interval-scaled version", ""]
    for n in ns:
        out.append(tau_section(tau, n))
    out += ["## 2. Topic-by-topic self-check", "", topic_check_section(tau)]
    out += ["## 3. Measure against measure", ""]
    for n in ns:
        measures = measures_of(tau[tau.n == n])
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
        out += ["## 6. Spacing of the measures' values", "", spacing_section(spacing, measures_of(tau))]
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
        for caption, path, *note in figures:
            if path:
                out += [f"![{caption}]({path})", "", f"*{caption}*", ""]
            out += [note[0], ""] if note and note[0] else []
    path = folder / "report.md"
    path.write_text("\n".join(out))
    return path
