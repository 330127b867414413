"""Explorers a user reaches for after the story: ipywidgets controls over the library's analyses.

Each explorer takes the frames a notebook already loaded and offers the controls
of one kind of data:

- :class:`LatencyExplorer` — percentile, threshold, time window, modes, two conditions compared;
- :class:`StraceExplorer` — syscalls, pid, duration range; the duration histogram and its peaks;
- :class:`CountersExplorer` — counter, hosts, interval; deltas and rates;
- :class:`YieldsExplorer` — sections, loop-pass time, instances: predicted duration and timeout risk.

The logic is a plain method, :meth:`view`, from the controls' values to a
:class:`View` (figure, table, text): tested without a browser. :meth:`widget`
wires ipywidgets to it; :meth:`show` displays the widget in a live kernel and,
when the notebook runs as a report (``WORKBENCH_STATIC=1``, set by
``workbench report``), the default view as a static figure and table instead,
so a shared page never holds a dead control.
"""
from __future__ import annotations

import html
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from . import readable
from .errors import UsageError
from .schema import requires

if TYPE_CHECKING:
    import ipywidgets
    from matplotlib.figure import Figure

    from .models.yields import DurationFit, YieldsFit

__all__ = ["CountersExplorer", "LatencyExplorer", "StraceExplorer", "View", "YieldsExplorer", "static_mode"]


def static_mode() -> bool:
    """True when notebooks run as a report (``WORKBENCH_STATIC=1``): explorers then draw a static view."""
    return os.environ.get("WORKBENCH_STATIC") == "1"


@dataclass
class View:
    """What an explorer shows for one set of control values: a figure, a table and a sentence."""

    figure: Figure
    table: pd.DataFrame
    text: str
    state: dict[str, Any] = field(default_factory=dict)


class _Explorer:
    """Shared display logic: controls → :meth:`view` → output area."""

    title = "explorer"

    def defaults(self) -> dict[str, Any]:  # pragma: no cover - every explorer defines it
        raise NotImplementedError

    view: Callable[..., View]  # each explorer's own controls → View

    def controls(self) -> dict[str, ipywidgets.Widget]:  # pragma: no cover
        raise NotImplementedError

    def _render(self, v: View) -> None:
        import matplotlib.pyplot as plt
        from IPython.display import HTML, display

        display(v.figure)
        plt.close(v.figure)
        display(readable.table(v.table))
        display(HTML(f"<p>{html.escape(v.text)}</p>"))  # HTML, not Markdown: no backslashes

    def widget(self) -> ipywidgets.Widget:
        """The controls and an output area that redraws on every change."""
        import ipywidgets as w

        ctl = self.controls()
        out = w.Output()

        def redraw(_: object = None) -> None:
            state = {k: c.value for k, c in ctl.items()}
            with out:
                out.clear_output(wait=True)
                try:
                    self._render(self.view(**state))
                except UsageError as exc:  # a control combination with nothing to show
                    print(f"nothing to show: {exc}")

        for c in ctl.values():
            c.observe(redraw, names="value")
        redraw()
        return w.VBox([w.HTML(f"<b>{html.escape(self.title)}</b>"), w.HBox(list(ctl.values())), out])

    def show(self) -> None:
        """The widget in a live kernel; the default view as a static figure and table in a report."""
        from IPython.display import display

        if static_mode():
            self._render(self.view(**self.defaults()))
        else:
            display(self.widget())


def _figure(ax: Any) -> Figure:
    """The whole figure an Axes sits on."""
    return cast("Figure", ax.get_figure(root=True))


# ------------------------------------------------------------------- latency

class LatencyExplorer(_Explorer):
    """Latency samples: percentile, threshold, time window, modes, two conditions compared.

    ``frame``: raw samples (``latency_s``, optional ``timestamp_s``); ``condition``:
    a column whose values are the conditions to compare (e.g. ``options`` or ``rate_per_s``).
    """

    title = "Latency explorer"

    def __init__(self, frame: pd.DataFrame, condition: str | None = None, threshold_s: float = 0.01) -> None:
        requires(frame, "latency_s", *([condition] if condition else []), kind="samples")
        self.frame = frame
        self.condition = condition
        self.threshold_s = float(threshold_s)
        ts = frame["timestamp_s"].to_numpy(dtype="float64") if "timestamp_s" in frame else np.array([])
        ts = ts[np.isfinite(ts)]
        self.t0 = float(ts.min()) if ts.size else 0.0
        self.span_s = float(ts.max() - ts.min()) if ts.size else 0.0
        self.conditions: list[str] = ([str(c) for c in pd.unique(frame[condition].astype(str))] if condition
                                      else ["all"])

    def defaults(self) -> dict[str, Any]:
        return {"q": 99.0, "threshold_ms": self.threshold_s * 1e3, "window_s": (0.0, self.span_s),
                "a": self.conditions[0], "b": self.conditions[-1], "modes": True}

    def _samples(self, name: str, window_s: tuple[float, float]) -> np.ndarray:
        f = self.frame
        if self.condition:
            f = f[f[self.condition].astype(str) == name]
        if "timestamp_s" in f and self.span_s > 0:
            rel = f["timestamp_s"].to_numpy(dtype="float64") - self.t0
            f = f[(rel >= window_s[0]) & (rel <= window_s[1])]
        return f["latency_s"].to_numpy(dtype="float64")

    def view(self, q: float = 99.0, threshold_ms: float = 10.0, window_s: tuple[float, float] = (0.0, math.inf),
             a: str | None = None, b: str | None = None, modes: bool = True) -> View:
        """Percentile ``q`` with its CI, requests over ``threshold_ms`` per second, modes, and ``a`` vs ``b``.

        Table columns: condition, n, pQ_ms, pQ_low_ms, pQ_high_ms, over_threshold, over_fraction.
        """
        from .stats import compare, find_modes, percentile_cis

        if not 0 < q < 100:
            raise UsageError(f"q={q!r}: expected a percentile between 0 and 100")
        names = [c for c in dict.fromkeys([a or self.conditions[0], b or self.conditions[-1]])]
        unknown = [n for n in names if n not in self.conditions]
        if unknown:
            raise UsageError(f"condition(s) {unknown} not in {self.conditions}")
        data = {n: self._samples(n, window_s) for n in names}
        rows: list[dict[str, Any]] = []
        marks: dict[str, float] = {}
        for n, v in data.items():
            fin = v[np.isfinite(v)]
            if fin.size == 0:
                rows.append({"condition": n, "n": 0})
                continue
            (ci,) = percentile_cis(fin, (q,), n_resamples=200)
            over = int(np.sum(~np.isfinite(v) | (v > threshold_ms / 1e3)))
            rows.append({"condition": n, "n": int(fin.size), "p_ms": ci.value * 1e3, "p_low_ms": ci.low * 1e3,
                         "p_high_ms": ci.high * 1e3, "over_threshold": over, "over_fraction": over / v.size})
            marks[f"p{q:g} {n}"] = ci.value
        table = pd.DataFrame(rows).rename(columns={"p_ms": f"p{q:g}_ms", "p_low_ms": f"p{q:g}_low_ms",
                                                   "p_high_ms": f"p{q:g}_high_ms"})
        pooled = np.concatenate([v[np.isfinite(v)] for v in data.values()])
        found = find_modes(pooled) if modes and pooled.size >= 10 else ()
        text = f"p{q:g}: " + "; ".join(f"{r['condition']} {readable.duration(r.get('p_ms', math.nan) / 1e3)}"
                                        for r in rows)
        if len(names) == 2 and all(data[n][np.isfinite(data[n])].size for n in names):
            (c,) = compare(data[names[0]], data[names[1]], (q,), n_resamples=200)
            text += (f". {names[1]} ÷ {names[0]} at p{q:g}: {readable.times(c.ratio)} "
                     f"(95 % CI {readable.times(c.low)}–{readable.times(c.high)}, resampling blocks)")
        if found:
            text += ". Modes at " + ", ".join(f"{readable.duration(m.location)} ({readable.count(m.count)} samples)"
                                               for m in found)
        from .plots.explore import plot_latency_view

        ax = plot_latency_view(data, found, threshold_ms / 1e3, marks, title="Latency by condition")
        return View(_figure(ax), table, text + ".", {"q": q, "threshold_ms": threshold_ms, "window_s": window_s,
                                                    "a": names[0], "b": names[-1]})

    def controls(self) -> dict[str, ipywidgets.Widget]:
        import ipywidgets as w

        d = self.defaults()
        return {
            "q": w.FloatSlider(value=d["q"], min=50, max=99.9, step=0.1, description="percentile"),
            "threshold_ms": w.FloatText(value=d["threshold_ms"], description="threshold ms"),
            "window_s": w.FloatRangeSlider(value=d["window_s"], min=0.0, max=max(self.span_s, 1e-9),
                                           description="window s", disabled=self.span_s == 0),
            "a": w.Dropdown(options=self.conditions, value=d["a"], description="A"),
            "b": w.Dropdown(options=self.conditions, value=d["b"], description="B"),
            "modes": w.Checkbox(value=True, description="modes"),
        }


# -------------------------------------------------------------------- strace

class StraceExplorer(_Explorer):
    """An strace frame: which syscalls, which pid, which duration range; histogram and peaks update."""

    title = "strace explorer"

    def __init__(self, frame: pd.DataFrame, top: int = 12) -> None:
        requires(frame, "kind", "syscall", "pid", "duration_s", "ret_text")
        self.frame = frame
        timed = frame[frame["duration_s"].notna()]
        self.names = [str(s) for s in timed["syscall"].value_counts().index[:top]]
        self.pids = ["all"] + [str(p) for p in timed["pid"].dropna().unique()[:50]]

    def defaults(self) -> dict[str, Any]:
        return {"syscalls": tuple(self.names[:6]), "pid": "all", "log10_range_s": (-4.0, 1.0)}

    def view(self, syscalls: Sequence[str] = (), pid: str = "all",
             log10_range_s: tuple[float, float] = (-4.0, 1.0)) -> View:
        """Histogram of the chosen calls' durations and their peaks in the range.

        Table: :func:`workbench.syscalls.waits.peaks_frame` (syscall, location_ms, low_ms, high_ms, count, …).
        """
        from .plots.stalls import plot_duration_histogram
        from .syscalls.summary import duration_histogram
        from .syscalls.waits import duration_peaks, peaks_frame

        lo, hi = 10.0 ** log10_range_s[0], 10.0 ** log10_range_s[1]
        if not lo < hi:
            raise UsageError(f"log10_range_s={log10_range_s!r}: expected low < high")
        f = self.frame
        names = list(syscalls) or self.names
        f = f[f["syscall"].astype(str).isin(names)]
        if pid != "all":
            f = f[f["pid"].astype(str) == str(pid)]
        d = f["duration_s"]
        f = f[(d >= lo) & (d < hi)]
        hist = duration_histogram(f, bins_per_decade=20, min_s=lo, max_s=hi, syscalls=names)
        peaks = duration_peaks(f, names, min_s=max(lo, 1e-4), max_s=hi) if len(f) else ()
        table = peaks_frame(peaks)
        ax = plot_duration_histogram(hist, peaks, syscalls=names, min_s=lo,
                                     title=f"{len(f):,} calls of {len(names)} syscalls, pid {pid}")
        text = (f"{readable.count(len(f))} calls between {readable.duration(lo)} and {readable.duration(hi)}; "
                + (", ".join(f"{p.syscall} at {readable.duration(p.location_s)} ×{p.count}" for p in peaks)
                   if peaks else "no sharp peak"))
        return View(_figure(ax), table, text, {"syscalls": names, "pid": pid, "log10_range_s": log10_range_s})

    def controls(self) -> dict[str, ipywidgets.Widget]:
        import ipywidgets as w

        d = self.defaults()
        return {
            "syscalls": w.SelectMultiple(options=self.names, value=d["syscalls"], description="syscalls", rows=6),
            "pid": w.Dropdown(options=self.pids, value="all", description="pid"),
            "log10_range_s": w.FloatRangeSlider(value=d["log10_range_s"], min=-7.0, max=2.0, step=0.5,
                                                description="log10 s"),
        }


# ------------------------------------------------------------------ counters

class CountersExplorer(_Explorer):
    """A counter snapshot series: which counter, which hosts, which interval; deltas and rates."""

    title = "Counters explorer"

    def __init__(self, series: pd.DataFrame) -> None:
        from .counters.series import deltas

        requires(series, "timestamp", "host", "source", "item", "counter", "value", "unit", "kind")
        self.deltas = deltas(series)
        d = self.deltas
        self.keys = sorted({f"{s}/{i}/{c}" if i else f"{s}/{c}" for s, i, c in
                            zip(d["source"], d["item"], d["counter"], strict=True)})
        self.hosts = sorted(str(h) for h in d["host"].unique())

    def defaults(self) -> dict[str, Any]:
        busiest = (self.deltas.groupby(["source", "item", "counter"])["delta"].sum().idxmax()
                   if len(self.deltas) else ("", "", ""))
        s, i, c = cast("tuple[str, str, str]", busiest)
        return {"counter": f"{s}/{i}/{c}" if i else f"{s}/{c}", "hosts": tuple(self.hosts), "interval_s": 0.0}

    def view(self, counter: str = "", hosts: Sequence[str] = (), interval_s: float = 0.0) -> View:
        """Rate of ``counter`` (``source/item/counter``) per host, summed over ``interval_s`` windows (0: as taken).

        Table columns: host, intervals, total (delta summed), mean_rate_per_s, max_rate_per_s, events.
        """
        from .plots.explore import plot_counter_rates

        parts = counter.split("/")
        if len(parts) not in (2, 3):
            raise UsageError(f"counter={counter!r}: expected source/counter or source/item/counter")
        s, c = parts[0], parts[-1]
        i = parts[1] if len(parts) == 3 else ""
        d = self.deltas
        d = d[(d["source"] == s) & (d["item"] == i) & (d["counter"] == c)]
        if hosts:
            d = d[d["host"].astype(str).isin([str(h) for h in hosts])]
        if interval_s and interval_s > 0 and len(d):
            origin = float(d["start_timestamp"].min())
            win = np.floor((d["timestamp"] - origin) / interval_s)
            d = (d.assign(win=win).groupby(["host", "win"], as_index=False)
                 .agg(start_timestamp=("start_timestamp", "min"), timestamp=("timestamp", "max"),
                      delta=("delta", "sum"), event=("event", lambda e: "reset" if (e != "").any() else "")))
            d["rate_per_s"] = d["delta"] / (d["timestamp"] - d["start_timestamp"])
        unit = str(self.deltas.loc[self.deltas["counter"] == c, "unit"].iloc[0]) if (self.deltas["counter"] == c).any() else ""
        table = (d.groupby("host").agg(intervals=("delta", "size"), total=("delta", "sum"),
                                       mean_rate_per_s=("rate_per_s", "mean"), max_rate_per_s=("rate_per_s", "max"),
                                       events=("event", lambda e: int((e != "").sum())))
                 .reset_index() if len(d) else pd.DataFrame(columns=["host", "intervals", "total"]))
        if unit == "bytes" and len(table):
            table = table.rename(columns={"total": "total_bytes"})
        ax = plot_counter_rates(d, unit, title=f"{counter}: rate per interval")
        fmt = readable.size if unit == "bytes" else readable.number
        text = "; ".join(f"{h}: {fmt(float(m))}/s on average over {readable.count(int(n))} intervals"
                         for h, m, n in zip(table["host"], table["mean_rate_per_s"], table["intervals"], strict=True)
                         ) if len(table) else "no interval of this counter"
        return View(_figure(ax), table, text, {"counter": counter, "hosts": list(hosts), "interval_s": interval_s})

    def controls(self) -> dict[str, ipywidgets.Widget]:
        import ipywidgets as w

        d = self.defaults()
        return {
            "counter": w.Dropdown(options=self.keys, value=d["counter"] if d["counter"] in self.keys else None,
                                  description="counter"),
            "hosts": w.SelectMultiple(options=self.hosts, value=d["hosts"], description="hosts", rows=4),
            "interval_s": w.FloatText(value=0.0, description="interval s"),
        }


# -------------------------------------------------------------------- yields

class YieldsExplorer(_Explorer):
    """The event-loop model as live controls: sections and loop-pass time → predicted save and timeout risk."""

    title = "Config-apply explorer"

    def __init__(self, fit: DurationFit, yields_fit: YieldsFit, timeout_ms: float = 10_000.0,
                 lag_sigma: float = 0.5, n_draws: int = 2000) -> None:
        self.fit, self.yields_fit = fit, yields_fit
        self.timeout_ms, self.lag_sigma, self.n_draws = float(timeout_ms), float(lag_sigma), int(n_draws)

    def defaults(self) -> dict[str, Any]:
        return {"sections": 8, "median_lag_ms": 25.0, "n_instances": 200, "lag_sigma": self.lag_sigma}

    def view(self, sections: int = 8, median_lag_ms: float = 25.0, n_instances: int = 200,
             lag_sigma: float = 0.5) -> View:
        """Predicted save at the median lag and the risk that the slowest of ``n_instances`` exceeds the timeout.

        The lag spread ``lag_sigma`` is an assumption (a lognormal across instances), stated as such.
        Table columns: sections, loop_lag_ms, duration_ms (the prediction grid around the chosen point).
        """
        from .models.yields import LognormalLag, predict_duration_ms, prediction_grid, timeout_risk
        from .plots.yields import plot_prediction_grid

        if sections < 1 or median_lag_ms <= 0 or n_instances < 1 or lag_sigma < 0:
            raise UsageError("sections >= 1, median_lag_ms > 0, n_instances >= 1 and lag_sigma >= 0 are needed")
        dur = float(predict_duration_ms(self.fit, self.yields_fit, sections, median_lag_ms))
        risk = timeout_risk(self.fit, self.yields_fit, sections, self.timeout_ms,
                            LognormalLag(median_ms=median_lag_ms, sigma=lag_sigma), n_instances=n_instances,
                            n_draws=self.n_draws)
        lags = np.geomspace(max(median_lag_ms / 10, 0.1), median_lag_ms * 10, 40)
        grid = prediction_grid(self.fit, self.yields_fit, sorted({max(1, sections // 2), sections, sections * 2}), lags)
        ax = plot_prediction_grid(grid, self.timeout_ms)
        ax.plot([median_lag_ms], [dur], "o", color="black", zorder=4, label="chosen point")
        ax.legend(fontsize=8)
        text = (f"{sections} sections at a median loop-pass time of {readable.duration(median_lag_ms / 1e3)}: "
                f"predicted save {readable.duration(dur / 1e3)}. Assuming a lognormal spread of σ = {lag_sigma:g} "
                f"across {readable.count(n_instances)} instances, P(slowest > {readable.duration(self.timeout_ms / 1e3)}) "
                f"= {readable.percent(risk.probability)} (an assumption-based scenario, not a measurement)")
        return View(_figure(ax), grid[grid["sections"] == sections], text,
                    {"sections": sections, "median_lag_ms": median_lag_ms, "n_instances": n_instances,
                     "lag_sigma": lag_sigma})

    def controls(self) -> dict[str, ipywidgets.Widget]:
        import ipywidgets as w

        return {
            "sections": w.IntSlider(value=8, min=1, max=64, description="sections"),
            "median_lag_ms": w.FloatLogSlider(value=25.0, base=10, min=-1, max=3, description="lag ms"),
            "n_instances": w.IntSlider(value=200, min=1, max=1000, description="instances"),
            "lag_sigma": w.FloatSlider(value=self.lag_sigma, min=0.0, max=2.0, step=0.05, description="σ (assumed)"),
        }


