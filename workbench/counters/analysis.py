"""Analyses of IO counters: anchor, demand vs fetch, amplification, ratios, reconciliation, attribution.

The method these functions encode: declare the counter that cannot lie (the *anchor*)
before looking at anything else; separate what the application asked for (demand) from
what the storage delivered (fetch); compare every other instrument with the anchor and
flag the one that disagrees; treat process/path attribution as a hypothesis.

Analyses take frames (from the loaders in :mod:`workbench.counters`) and numbers; they
never read files.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import UsageError
from ..schema import requires
from ._common import COLUMNS
from .series import KEYS, deltas


@dataclass(frozen=True)
class Anchor:
    """The counter every other number is checked against, and why it is trusted."""

    source: str
    item: str
    counter: str
    unit: str
    why: str

    @property
    def label(self) -> str:
        return f"{self.source}:{self.item}/{self.counter}"


CEPHFS_READ_ANCHOR = Anchor(
    source="cephfs_metrics", item="read", counter="total_sz_bytes", unit="bytes",
    why="bytes the CephFS client pulled from the OSDs (incremented per OSD read reply): "
        "immune to page-cache hits, async timing and bursts",
)


def declare_anchor(source: str = "cephfs_metrics", item: str = "read", counter: str = "total_sz_bytes",
                   unit: str = "bytes", why: str | None = None) -> Anchor:
    """Declare the anchor counter (default: CephFS ``size/read total_sz``)."""
    return Anchor(source, item, counter, unit, why or CEPHFS_READ_ANCHOR.why)


def _select(frame: pd.DataFrame, **eq: str | None) -> pd.DataFrame:
    m = pd.Series(True, index=frame.index)
    for k, v in eq.items():
        if v is not None:
            m &= frame[k] == v
    return frame[m]


def increase(series: pd.DataFrame, *, source: str, item: str, counter: str, start: float, end: float,
             host: str | None = None, instance: str | None = None) -> float:
    """Increase of a cumulative counter between ``start`` and ``end`` (seconds since the epoch).

    Resets are corrected first (see :func:`workbench.counters.deltas`); the reset-corrected
    cumulative curve is interpolated linearly at ``start`` and ``end`` so instruments sampled
    on different grids can be compared on the same window. Raises
    :class:`~workbench.errors.UsageError` (a ValueError) when the window is not covered by
    the samples or the counter is absent.
    """
    requires(series, *COLUMNS)
    sel = _select(series, source=source, item=item, counter=counter, host=host, instance=instance)
    sel = sel[sel["timestamp"].notna()]
    if sel.empty:
        raise UsageError(f"increase: no timestamped samples of source={source!r} item={item!r} counter={counter!r} "
                         f"(host={host!r}, instance={instance!r}) in the series; expected a counter it holds")
    total = 0.0
    for (h, inst), g in sel.groupby(["host", "instance"], sort=True):
        g = g.sort_values("timestamp")
        first, last = float(g["timestamp"].iloc[0]), float(g["timestamp"].iloc[-1])
        if first > start + 1e-9 or last < end - 1e-9:
            raise UsageError(f"increase: start={start}, end={end}: the samples of {source}:{item}/{counter} "
                             f"(host={h!r}, instance={inst!r}) cover [{first}, {last}], not the window [{start}, {end}]; "
                             "expected a window inside the samples")
        d = deltas(g)
        cum = np.concatenate([[0.0], np.cumsum(d["delta"].to_numpy())])
        ts = np.concatenate([[g["timestamp"].iloc[0]], d["timestamp"].to_numpy()])
        total += float(np.interp(end, ts, cum) - np.interp(start, ts, cum))
    return total


def latest(series: pd.DataFrame) -> pd.DataFrame:
    """The last reading of every counter (one row per host/source/instance/item/counter)."""
    requires(series, *COLUMNS)
    s = series.sort_values("timestamp", kind="stable")
    return s.groupby(KEYS, sort=True).tail(1).reset_index(drop=True)


# --- demand vs fetch -------------------------------------------------------------------------

def map_values(maps: pd.DataFrame, counter: str) -> pd.Series:
    """One bpftrace map (by name, e.g. ``@ra_bytes``) as a Series key → value (summed over files)."""
    requires(maps, "item", "counter", "value")
    sel = maps[maps["counter"] == counter]
    if sel.empty:
        raise UsageError(f"map_values: counter={counter!r} is not a map of this bpftrace output; expected one of "
                         f"{sorted(maps['counter'].unique())}")
    out = sel.groupby("item")["value"].sum()
    out.index.name = "key"
    return out


def demand_vs_fetch(demand_bytes: pd.Series, reads: pd.Series, fetched_bytes: pd.Series,
                    fetches: pd.Series) -> pd.DataFrame:
    """Per key (file): what the application asked for vs what was fetched from storage.

    Returns columns key, demand_bytes, reads, fetched_bytes, fetches, cache_hit_pct
    (100 × (1 − fetches / reads): reads served without a fetch), fetch_over_demand;
    sorted by demand, largest first. Keys present on one side only get zeros.
    """
    df = pd.concat({"demand_bytes": demand_bytes, "reads": reads, "fetched_bytes": fetched_bytes,
                    "fetches": fetches}, axis=1).fillna(0.0)
    df.index.name = "key"
    df = df.reset_index()
    with np.errstate(divide="ignore", invalid="ignore"):
        df["cache_hit_pct"] = np.where(df["reads"] > 0, 100.0 * (1 - np.minimum(df["fetches"] / df["reads"], 1.0)),
                                       math.nan)
        df["fetch_over_demand"] = np.where(df["demand_bytes"] > 0, df["fetched_bytes"] / df["demand_bytes"],
                                           math.nan)
    return df.sort_values("demand_bytes", ascending=False, kind="stable").reset_index(drop=True)


@dataclass(frozen=True)
class Amplification:
    """Fetched vs requested bytes, per read operation and per request."""

    fetched_bytes: float
    requested_bytes: float
    read_ops: float
    requests: float
    fetched_per_read_bytes: float
    requested_per_read_bytes: float
    amplification: float  # fetched ÷ requested
    fetched_per_request_bytes: float


def amplification(fetched_bytes: float, requested_bytes: float, read_ops: float,
                  requests: float) -> Amplification:
    """Amplification of a window: ``fetched_bytes`` (the anchor's increase) against demand."""
    if not (read_ops > 0 and requested_bytes > 0):
        raise UsageError(f"amplification: read_ops={read_ops!r}, requested_bytes={requested_bytes!r}; "
                         "expected both > 0 (a window where the application read something)")
    return Amplification(
        fetched_bytes=float(fetched_bytes), requested_bytes=float(requested_bytes), read_ops=float(read_ops),
        requests=float(requests), fetched_per_read_bytes=fetched_bytes / read_ops,
        requested_per_read_bytes=requested_bytes / read_ops, amplification=fetched_bytes / requested_bytes,
        fetched_per_request_bytes=fetched_bytes / requests if requests > 0 else math.nan)


# --- ratios ----------------------------------------------------------------------------------

def read_write_totals(snapshot: pd.DataFrame, anchor: Anchor = CEPHFS_READ_ANCHOR,
                      write_item: str = "write") -> pd.DataFrame:
    """Cumulative bytes read and written per host from one reading per counter (see :func:`latest`).

    Returns columns host, read_bytes, write_bytes, read_write_ratio; the last row, host
    ``'all'``, sums the hosts.
    """
    requires(snapshot, "host", "source", "item", "counter", "value")
    sel = snapshot[(snapshot["source"] == anchor.source) & (snapshot["counter"] == anchor.counter)]
    r = sel[sel["item"] == anchor.item].groupby("host")["value"].sum()
    w = sel[sel["item"] == write_item].groupby("host")["value"].sum()
    df = pd.DataFrame({"read_bytes": r, "write_bytes": w}).fillna(0.0)
    df.loc["all"] = df.sum()
    df["read_write_ratio"] = df["read_bytes"] / df["write_bytes"].where(df["write_bytes"] > 0)
    df.index.name = "host"
    return df.reset_index()


def interface_ratios(net: pd.DataFrame, private: str, public: str, value: str = "value") -> pd.DataFrame:
    """Private/public interface byte ratios per host from net_dev readings or deltas.

    ``net`` has columns host, item (interface), counter (rx_bytes/tx_bytes) and ``value``
    (cumulative readings from :func:`latest`, or ``delta`` from a window). Returns host,
    private_rx_bytes, private_tx_bytes, public_rx_bytes, private_rx_over_tx,
    private_over_public_rx; the last row (host ``'all'``) sums the hosts.
    """
    requires(net, "host", "item", "counter", value)
    n = net[net["source"] == "net_dev"] if "source" in net.columns else net
    piv = n.pivot_table(index="host", columns=["item", "counter"], values=value, aggfunc="sum")
    for iface in (private, public):
        if (iface, "rx_bytes") not in piv.columns:
            which = "private" if iface == private else "public"
            raise UsageError(f"interface_ratios: {which}={iface!r}: interface {iface!r} has no rx_bytes readings; "
                             f"expected one of {sorted({c[0] for c in piv.columns})}")
    df = pd.DataFrame({
        "private_rx_bytes": piv[(private, "rx_bytes")], "private_tx_bytes": piv[(private, "tx_bytes")],
        "public_rx_bytes": piv[(public, "rx_bytes")]})
    df.loc["all"] = df.sum()
    df["private_rx_over_tx"] = df["private_rx_bytes"] / df["private_tx_bytes"]
    df["private_over_public_rx"] = df["private_rx_bytes"] / df["public_rx_bytes"]
    df.index.name = "host"
    return df.reset_index()


# --- nodes vs an attribute -------------------------------------------------------------------

@dataclass(frozen=True)
class NodePrediction:
    """Per-node rates against an attribute, and the falsifiable prediction that follows."""

    table: pd.DataFrame  # host, attribute, read_bytes_per_s, requests_per_s, bytes_per_request, predicted_...
    attribute: str
    baseline_state: str
    baseline_bytes_per_request: float
    rate_vs_requests_spearman: float
    state_rate_ratio: float  # median rate of the other states ÷ median rate of the baseline state
    prediction: str


def node_rates(read_bytes: pd.Series, requests: pd.Series, window_s: float, attributes: pd.DataFrame,
               attribute: str, baseline_state: str) -> NodePrediction:
    """Read rate and bytes per request per host, compared across ``attribute`` values.

    ``read_bytes`` and ``requests`` are per-host increases over the same window of
    ``window_s`` seconds. The baseline is the median bytes per request of hosts whose
    ``attribute`` equals ``baseline_state``; every other host is predicted to fall to
    ``requests_per_s × baseline`` when it reaches that state.
    """
    requires(attributes, "host", attribute)
    if not window_s > 0:
        raise UsageError(f"node_rates: window_s={window_s!r}; expected the window's length in seconds, > 0")
    from scipy.stats import spearmanr

    df = pd.DataFrame({"read_bytes": read_bytes, "requests": requests}).dropna()
    df.index.name = "host"
    df = df.reset_index().merge(attributes[["host", attribute]], on="host", how="left")
    df[attribute] = df[attribute].fillna("(unknown)")
    df["read_bytes_per_s"] = df["read_bytes"] / window_s
    df["requests_per_s"] = df["requests"] / window_s
    df["bytes_per_request"] = df["read_bytes"] / df["requests"]
    base = df[df[attribute] == baseline_state]
    if base.empty:
        raise UsageError(f"node_rates: baseline_state={baseline_state!r}: no host has {attribute} == "
                         f"{baseline_state!r}; expected one of {sorted(map(str, df[attribute].unique()))}")
    b = float(base["bytes_per_request"].median())
    df["predicted_read_bytes_per_s"] = np.where(df[attribute] == baseline_state, df["read_bytes_per_s"],
                                                df["requests_per_s"] * b)
    df["predicted_drop_factor"] = df["read_bytes_per_s"] / df["predicted_read_bytes_per_s"]
    rho = float(spearmanr(df["requests_per_s"], df["read_bytes_per_s"]).statistic) if len(df) > 2 else math.nan
    others = df[df[attribute] != baseline_state]
    ratio = float(others["read_bytes_per_s"].median() / base["read_bytes_per_s"].median()) if len(others) else math.nan
    lines = [f"{h}: {float(now) / 2**20:.2f} → {float(then) / 2**20:.2f} MiB/s"
             for h, now, then in zip(others["host"], others["read_bytes_per_s"],
                                     others["predicted_read_bytes_per_s"], strict=True)]
    text = (f"When the hosts not yet '{baseline_state}' get there, their read rate falls to requests/s × "
            f"{b / 2**20:.2f} MiB per request (the baseline measured on '{baseline_state}' hosts): "
            + "; ".join(lines))
    return NodePrediction(df, attribute, baseline_state, b, rho, ratio, text)


# --- reconciliation --------------------------------------------------------------------------

@dataclass(frozen=True)
class Reconciliation:
    """N instruments measuring the same bytes, each compared with the anchor."""

    anchor: str
    anchor_bytes: float
    tolerance: float
    table: pd.DataFrame  # instrument, bytes, ratio_to_anchor, rel_diff, agrees, verdict
    agreeing: tuple[str, ...]
    disagreeing: tuple[str, ...]
    max_rel_diff_agreeing: float


def _verdict(ratio: float, tol: float) -> str:
    if not math.isfinite(ratio) or ratio <= 0:
        return "sees nothing"
    if abs(ratio - 1) <= tol:
        return f"agrees within {tol:.0%} ({ratio - 1:+.1%})"
    return f"undercounts ×{1 / ratio:.1f}" if ratio < 1 else f"overcounts ×{ratio:.2f}"


def reconcile(anchor_bytes: float, instruments: dict[str, float], tolerance: float = 0.06,
              anchor: str = "anchor") -> Reconciliation:
    """Compare each instrument's byte count with the anchor's; flag those off by more than ``tolerance``.

    ``rel_diff`` = instrument ÷ anchor − 1. The anchor wins by declaration: an instrument
    that disagrees is wrong until it reproduces the anchor by itself.
    """
    if not anchor_bytes > 0:
        raise UsageError(f"reconcile: anchor_bytes={anchor_bytes!r}: the anchor saw no bytes in this window; "
                         "expected > 0 (reconcile a window where it moved)")
    rows = []
    for name, b in instruments.items():
        ratio = b / anchor_bytes
        rows.append((name, float(b), ratio, ratio - 1, abs(ratio - 1) <= tolerance, _verdict(ratio, tolerance)))
    table = pd.DataFrame(rows, columns=["instrument", "bytes", "ratio_to_anchor", "rel_diff", "agrees", "verdict"])
    ok = table[table["agrees"]]
    return Reconciliation(anchor, float(anchor_bytes), tolerance, table, tuple(ok["instrument"]),
                          tuple(table.loc[~table["agrees"], "instrument"]),
                          float(ok["rel_diff"].abs().max()) if len(ok) else math.nan)


# --- attribution (hypotheses) ---------------------------------------------------------------

HYPOTHESIS = "hypothesis (attribution), not measurement"


def attribute(bytes_by_key: pd.Series, rules: dict[str, str], other: str = "other") -> pd.DataFrame:
    """Share of bytes per category, each key assigned to the first category whose regex matches.

    Returns category, bytes, share_pct, keys and a ``status`` column saying this is a
    hypothesis: it tells who *probably* caused the bytes, not how many there were.
    """
    compiled = []
    for cat, rx in rules.items():
        try:
            compiled.append((cat, re.compile(rx)))
        except re.error as exc:
            raise UsageError(f"attribute: rules[{cat!r}]={rx!r} is not a regular expression ({exc})") from None

    def cat_of(k: str) -> str:
        return next((c for c, rx in compiled if rx.search(str(k))), other)

    cats = bytes_by_key.index.map(cat_of)
    g = bytes_by_key.groupby(cats)
    df = pd.DataFrame({"bytes": g.sum(), "keys": g.size()})
    df["share_pct"] = 100 * df["bytes"] / df["bytes"].sum()
    df.index.name = "category"
    df = df.reset_index().sort_values("bytes", ascending=False).reset_index(drop=True)
    df["status"] = HYPOTHESIS
    return df[["category", "bytes", "share_pct", "keys", "status"]]


def openat_coverage(fetched_by_path: pd.Series, opened_paths: set[str]) -> pd.DataFrame:
    """How much of the fetched bytes an openat trace could attribute (files it saw opened).

    Returns rows ``seen by openat`` / ``never opened in the trace`` with bytes, files,
    share_pct and the hypothesis status.
    """
    seen = fetched_by_path.index.isin(list(opened_paths))
    df = pd.DataFrame({
        "files_group": ["seen by openat", "never opened in the trace"],
        "bytes": [fetched_by_path[seen].sum(), fetched_by_path[~seen].sum()],
        "files": [int(seen.sum()), int((~seen).sum())],
    })
    df["share_pct"] = 100 * df["bytes"] / df["bytes"].sum()
    df["status"] = HYPOTHESIS
    return df


# --- the local readahead probe ---------------------------------------------------------------

def _phase_increase(win: pd.DataFrame, source: str, counter: str) -> float:
    """Increase of one counter across the snapshots of a probe phase (NaN when absent)."""
    own = win[win["source"] == source]
    try:
        return increase(own, source=source, item=own["item"].iloc[0], counter=counter,
                        start=float(own["timestamp"].min()), end=float(own["timestamp"].max()))
    except (ValueError, IndexError):
        return math.nan


def probe_ways(reads: pd.DataFrame, files: pd.DataFrame, counters: pd.DataFrame,
               phases: dict[str, dict], page_bytes: int = 4096) -> pd.DataFrame:
    """The same pulled bytes counted four ways, per advice of a readahead probe run.

    Returns advice, reads, requested_bytes, per_read_sum_bytes (Σ residency change across
    each read), residency_bytes (whole-file final − baseline), vmstat_pgpgin_bytes (system-wide
    block-layer reads), pid_io_read_bytes (the probe's own storage reads), pages_per_read
    and amplification (pid_io_read_bytes ÷ requested_bytes, falling back to residency when
    the process saw no storage reads, e.g. on tmpfs).

    ``reads``, ``files`` and ``counters`` are a probe capture's tables
    (:class:`workbench.lab.readahead.ProbeCapture`); ``phases``: advice → ``start_ts``, ``end_ts``.
    """
    requires(reads, "advice", "request_bytes", "pulled_bytes")
    requires(files, "advice", "baseline_pages", "final_pages")
    requires(counters, *COLUMNS)
    if not page_bytes > 0:
        raise UsageError(f"probe_ways: page_bytes={page_bytes!r}; expected the page size in bytes, > 0")
    rows = []
    for advice, ph in phases.items():
        r = reads[reads["advice"] == advice]
        f = files[files["advice"] == advice]
        if r.empty:
            continue
        try:
            t0, t1 = float(ph["start_ts"]), float(ph["end_ts"])
        except (KeyError, TypeError, ValueError):
            raise UsageError(f"probe_ways: phases[{advice!r}]={ph!r}; expected a dict with start_ts and end_ts "
                             "(seconds since the epoch), as in the capture's meta.json") from None
        win = counters[(counters["timestamp"] >= t0) & (counters["timestamp"] <= t1)]

        pid = _phase_increase(win, "pid_io", "read_bytes")
        resid = float(((f["final_pages"] - f["baseline_pages"]) * page_bytes).sum())
        fetched = pid if (math.isfinite(pid) and pid > 0) else resid
        req = float(r["request_bytes"].sum())
        rows.append({
            "advice": advice, "reads": len(r), "requested_bytes": req,
            "per_read_sum_bytes": float(r["pulled_bytes"].sum()), "residency_bytes": resid,
            "vmstat_pgpgin_bytes": _phase_increase(win, "vmstat", "pgpgin") * 1024.0, "pid_io_read_bytes": pid,
            "pages_per_read": fetched / page_bytes / len(r), "amplification": fetched / req,
        })
    return pd.DataFrame(rows)


def probe_breakdown(reads: pd.DataFrame, page_bytes: int = 4096) -> pd.DataFrame:
    """Mean pages pulled per read by advice, file kind and position (offset 0 vs random).

    Returns advice, file_kind, position, reads, pulled_bytes, requested_bytes, pages_per_read,
    amplification (pulled ÷ requested bytes).
    """
    requires(reads, "advice", "file_kind", "order", "pulled_bytes", "request_bytes")
    if not page_bytes > 0:
        raise UsageError(f"probe_breakdown: page_bytes={page_bytes!r}; expected the page size in bytes, > 0")
    r = reads.assign(position=np.where(reads["order"] == 0, "offset 0", "random offset"))
    g = r.groupby(["advice", "file_kind", "position"], sort=True)
    out = g.agg(reads=("pulled_bytes", "size"), pulled_bytes=("pulled_bytes", "sum"),
                requested_bytes=("request_bytes", "sum")).reset_index()
    out["pages_per_read"] = out["pulled_bytes"] / page_bytes / out["reads"]
    out["amplification"] = out["pulled_bytes"] / out["requested_bytes"]
    return out
