"""PNG figures equivalent to the thesis's figures 5.1-5.8, drawn from summaries only.

Each function takes the summary rows (:func:`chronojoin.report.load.summarise`) of one
family in one run and writes zero or more PNG files; it returns ``(title, filename)``
pairs. A figure whose data is absent is simply not drawn.
"""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

Figure = tuple[str, str]
_GIB = 1024.0**3
_MIB = 1024.0**2


#: What a case's size counts, per family (reports label their size axes with it).
SIZE_UNITS = {"asof": "ids", "band": "rows per side", "intervals": "points",
              "interval_join": "points",
              "loader": "table rows"}


def size_unit(summary: pd.DataFrame) -> str:
    """The size unit of a family's rows: ``ids`` for as-of joins, ``points``, ..."""
    if "family" in summary and not summary.empty:
        return SIZE_UNITS.get(str(summary["family"].iloc[0]), "size")
    return "ids"


def is_standalone(master: str) -> bool:
    """Whether ``master`` is a standalone cluster's URL (``spark://host:port``)."""
    return master.startswith("spark://")


def finished(summary: pd.DataFrame) -> pd.Series:
    """Rows with a time: at least one timed run finished (``ok``, ``ok (1 timeout)``)."""
    if "runs" in summary:
        return summary["runs"] > 0
    return summary["status"] == "ok"


def size_rows(summary: pd.DataFrame) -> pd.DataFrame:
    """Rows of the size/order study: plain datasets (no buckets, skew or many-left)."""
    df = summary[finished(summary)]
    if "p_variant" in df:
        df = df[df["p_variant"].isin(["size", "order"]) | df["p_variant"].isna()]
    if "p_buckets" in df:
        df = df[df["p_buckets"].isna()]
    return df[df["size"].notna()]


def _panels(df: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    if "p_order" in df and df["p_order"].notna().any():
        return [(f"order {o}", g) for o, g in df.groupby("p_order", sort=True)]
    return [("", df)]


def _lines(
    df: pd.DataFrame, x: str, y: str, *, title: str, xlabel: str, ylabel: str, path: str,
    scale: float = 1.0, logx: bool = True, logy: bool = False,
    hlines: pd.DataFrame | None = None,
) -> bool:
    panels = _panels(df)
    panels = [(n, g[g[y].notna()]) for n, g in panels if g[y].notna().any()]
    if not panels:
        return False
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4), squeeze=False)
    for ax, (name, group) in zip(axes[0], panels, strict=True):
        for method, unsorted in group.groupby("method", sort=True):
            g = unsorted.sort_values(x)
            line = ax.plot(g[x], g[y] / scale, marker="o", label=str(method))
            if hlines is not None:
                ref = hlines[hlines["method"] == method]["elapsed_s"].dropna()
                if len(ref):
                    ax.axhline(float(ref.iloc[0]) / scale, ls="--", lw=0.8,
                               color=line[0].get_color())
        if name:
            ax.set_title(name, fontsize=10)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if logx:
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
    axes[0][-1].legend(fontsize=8, loc="best")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def size_figures(summary: pd.DataFrame, out: str, prefix: str) -> list[Figure]:
    """Figures 5.1-5.3: elapsed time, peak execution memory, shuffle bytes vs size."""
    df = size_rows(summary)
    specs = [
        ("elapsed_s", "Elapsed time vs dataset size (fig. 5.1)", "seconds", 1.0, True),
        ("peak_execution_memory_bytes", "Peak execution memory (fig. 5.2)", "GiB", _GIB, False),
        ("shuffle_write_bytes", "Shuffle bytes written (fig. 5.3)", "MiB", _MIB, False),
        ("shuffle_read_bytes", "Shuffle bytes read", "MiB", _MIB, False),
    ]
    made = []
    for metric, title, unit, scale, logy in specs:
        name = f"{prefix}_{metric}_vs_size.png"
        if _lines(df, "size", metric, title=title, xlabel=size_unit(summary), ylabel=unit,
                  path=os.path.join(out, name), scale=scale, logy=logy):
            made.append((title, name))
    return made


def bucket_figures(summary: pd.DataFrame, out: str, prefix: str) -> list[Figure]:
    """Figures 5.4-5.6: elapsed, memory and spill vs bucket count (ref: unbucketed)."""
    if "p_buckets" not in summary:
        return []
    ok = summary[finished(summary)]
    df = ok[ok["p_buckets"].notna()].copy()
    if df.empty:
        return []
    df["p_buckets"] = df["p_buckets"].astype(int)
    sizes = set(df["size"].dropna())
    plain = size_rows(summary)
    ref = plain[plain["size"].isin(sizes)]
    if "p_order" in ref:
        ref = ref[ref["p_order"] == "asc"]
    df = df.drop(columns=[c for c in ("p_order",) if c in df])
    specs = [
        ("elapsed_s", "Elapsed time vs buckets (fig. 5.4; dashed: unbucketed)", "seconds", 1.0),
        ("peak_execution_memory_bytes", "Peak execution memory vs buckets (fig. 5.5)", "GiB",
         _GIB),
        ("disk_spill_bytes", "Disk spill vs buckets (fig. 5.6a)", "MiB", _MIB),
        ("memory_spill_bytes", "Memory spill vs buckets (fig. 5.6b)", "MiB", _MIB),
    ]
    made = []
    for metric, title, unit, scale in specs:
        name = f"{prefix}_{metric}_vs_buckets.png"
        hl = ref if metric == "elapsed_s" else None
        if _lines(df, "p_buckets", metric, title=title, xlabel="buckets", ylabel=unit,
                  path=os.path.join(out, name), scale=scale, logx=False, hlines=hl):
            made.append((title, name))
    return made


def executor_figure(summary: pd.DataFrame, out: str, prefix: str) -> list[Figure]:
    """Figure 5.7: elapsed time vs executors (one line per method and dataset).

    Local masters and standalone clusters get lines of their own: ``local[2]`` and a
    cluster of two workers have the same executor count but not the same costs.
    """
    df = size_rows(summary)
    df = df[df["executors"].notna()]
    if df["executors"].nunique() < 2:
        return []
    df = df.copy()
    standalone = df["master"].fillna("").map(is_standalone)
    df["method"] = (df["method"] + " n=" + df["size"].astype(int).astype(str)
                    + standalone.map({True: " (standalone)", False: ""}))
    name = f"{prefix}_elapsed_vs_executors.png"
    title = "Elapsed time vs executors (fig. 5.7)"
    if _lines(df, "executors", "elapsed_s", title=title, xlabel="executors (cores)",
              ylabel="seconds", path=os.path.join(out, name), logx=False):
        return [(title, name)]
    return []


def reference_figure(summary: pd.DataFrame, out: str, prefix: str) -> list[Figure]:
    """Figure 5.8 analogue: every method side by side per size, local references included."""
    df = size_rows(summary)
    if "p_order" in df:
        df = df[df["p_order"].isin(["asc"]) | df["p_order"].isna()]
    if df.empty:
        return []
    table = df.pivot_table(index="size", columns="method", values="elapsed_s", aggfunc="median")
    if table.empty:
        return []
    fig, ax = plt.subplots(figsize=(max(5.0, 1.2 * len(table.columns) * len(table)), 4))
    table.plot.bar(ax=ax, logy=True, rot=0)
    ax.set_xlabel(size_unit(summary))
    ax.set_ylabel("seconds (log)")
    title = "All methods side by side (fig. 5.8 analogue)"
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    name = f"{prefix}_methods_by_size.png"
    fig.savefig(os.path.join(out, name), dpi=110)
    plt.close(fig)
    return [(title, name)]


def all_figures(summary: pd.DataFrame, out: str, prefix: str) -> list[Figure]:
    """Every figure of one family in one run."""
    made: list[Figure] = []
    one = main_master_rows(summary)
    made += size_figures(one, out, prefix)
    made += bucket_figures(one, out, prefix)
    made += reference_figure(one, out, prefix)
    made += executor_figure(summary, out, prefix)
    return made


def main_master_rows(summary: pd.DataFrame) -> pd.DataFrame:
    """Rows of the master with the most executors (figures 5.1-5.6 use one master)."""
    if summary["master"].nunique(dropna=True) < 2:
        return summary
    ranked = summary.sort_values("executors", ascending=False, na_position="last")
    return summary[summary["master"] == ranked["master"].iloc[0]]
