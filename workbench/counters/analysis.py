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
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import UsageError
from ..schema import requires
from ..verdicts import Decision, decide
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
                      write_item: str = "write", write: Anchor | None = None) -> pd.DataFrame:
    """Cumulative bytes read and written per host from one reading per counter (see :func:`latest`).

    Reads are the ``anchor`` counter; writes are ``write`` when given, else the anchor's counter
    on item ``write_item``. Returns columns host, read_bytes, write_bytes, read_write_ratio
    (NaN where nothing was written); the last row, host ``'all'``, sums the hosts.
    """
    requires(snapshot, "host", "source", "item", "counter", "value")
    w_spec = write or Anchor(anchor.source, write_item, anchor.counter, anchor.unit, "write side")
    r = _select(snapshot, source=anchor.source, item=anchor.item, counter=anchor.counter).groupby("host")["value"].sum()
    w = _select(snapshot, source=w_spec.source, item=w_spec.item, counter=w_spec.counter).groupby("host")["value"].sum()
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


# --- counters named by the user ----------------------------------------------------------------

_BYTE_SCALE = {"bytes": 1.0, "B": 1.0, "KiB": 1024.0, "kB": 1000.0, "MiB": 2.0**20}


def parse_counter(spec: str, *, param: str = "counter") -> Anchor:
    """A counter named ``source:item/counter`` (``diskstats:loop0/read_bytes``, ``vmstat:/pgpgin``).

    The item may be empty (``vmstat:/pgpgin``); the counter is what follows the last ``/``.
    Returns an :class:`Anchor` (source, item, counter; unit ``bytes``). A malformed name raises
    :class:`~workbench.errors.UsageError` naming ``param``.
    """
    text = str(spec).strip()
    source, sep, rest = text.partition(":")
    item, slash, counter = rest.rpartition("/")
    if not (sep and slash and source and counter):
        raise UsageError(f"{param}={spec!r}: expected source:item/counter, e.g. diskstats:sda/read_bytes, "
                         "cephfs_metrics:read/total_sz_bytes, net_dev:eth1/rx_bytes or vmstat:/pgpgin")
    src, it, ctr = source.strip(), item.strip(), counter.strip()
    why = _ANCHOR_WHY.get((src, ctr)) or f"declared by the user: counter {ctr!r} of {src} {it or '(no item)'}"
    return Anchor(src, it, ctr, "bytes", why=why)


_ANCHOR_WHY = {
    ("cephfs_metrics", "total_sz_bytes"): CEPHFS_READ_ANCHOR.why,
    ("diskstats", "read_bytes"): "bytes the block device completed reading (sectors × 512): below the page cache, "
                                 "only what came from the device",
    ("pid_io", "read_bytes"): "bytes this process caused to be fetched from storage (/proc/<pid>/io): immune to "
                              "other tenants and to page-cache hits",
    ("net_dev", "rx_bytes"): "bytes the interface received: every byte on the wire, whoever asked for it",
}


def parse_counters(specs: str, *, param: str = "counters") -> list[Anchor]:
    """Several counters, comma-separated (see :func:`parse_counter`); '' gives []."""
    return [parse_counter(s, param=param) for s in str(specs).split(",") if s.strip()]


def counter_hosts(series: pd.DataFrame, spec: Anchor) -> list[str]:
    """Hosts whose series holds ``spec`` with at least two timestamped readings."""
    requires(series, *COLUMNS)
    sel = _select(series, source=spec.source, item=spec.item, counter=spec.counter)
    sel = sel[sel["timestamp"].notna()]
    n = sel.groupby("host")["timestamp"].nunique()
    return sorted(str(h) for h in n[n >= 2].index)


def byte_scale(series: pd.DataFrame, spec: Anchor, page_bytes: int = 4096) -> float:
    """Bytes per unit of ``spec``'s readings (bytes 1, KiB 1024, pages ``page_bytes``).

    Raises :class:`~workbench.errors.UsageError` when the counter is absent or does not count bytes.
    """
    requires(series, *COLUMNS)
    sel = _select(series, source=spec.source, item=spec.item, counter=spec.counter)
    if sel.empty:
        raise UsageError(f"counter {spec.label!r} is not in the series; expected one it holds, e.g. "
                         f"{sorted(set((series['source'] + ':' + series['item'] + '/' + series['counter']).head(2000)))[:6]}")
    unit = str(sel["unit"].iloc[0])
    if unit == "pages":
        return float(page_bytes)
    if unit not in _BYTE_SCALE:
        raise UsageError(f"counter {spec.label!r} counts {unit!r}, not bytes; expected a byte counter "
                         "(bytes, KiB or pages)")
    return _BYTE_SCALE[unit]


def increase_bytes(series: pd.DataFrame, spec: Anchor, *, start: float, end: float, host: str | None = None,
                   page_bytes: int = 4096) -> float:
    """:func:`increase` of a byte counter named by ``spec``, converted to bytes (KiB and pages scaled)."""
    scale = byte_scale(series, spec, page_bytes)
    return scale * increase(series, source=spec.source, item=spec.item, counter=spec.counter, start=start,
                            end=end, host=host)


def write_counterpart(spec: Anchor) -> Anchor | None:
    """The write counter beside a read counter: ``read_bytes``→``write_bytes``, item ``read``→``write``,
    ``rx_bytes``→``tx_bytes``, ``pgpgin``→``pgpgout``; None when there is no obvious one."""
    swaps = (("read", "write"), ("rx_", "tx_"), ("pgpgin", "pgpgout"))
    for a, b in swaps:
        if a in spec.counter:
            return Anchor(spec.source, spec.item, spec.counter.replace(a, b), spec.unit, "write side of the anchor")
    if spec.item == "read":
        return Anchor(spec.source, "write", spec.counter, spec.unit, "write side of the anchor")
    return None


# --- describing the data --------------------------------------------------------------------

def describe_sizes(sizes: pd.Series | np.ndarray | list[float]) -> str:
    """Read sizes as their distribution says: ``"512 B"`` when all equal, else ``"16 B–512 B (median 254 B)"``."""
    from ..readable import size

    v = pd.to_numeric(pd.Series(sizes), errors="coerce").dropna().to_numpy(dtype="float64")
    if v.size == 0:
        return "no read sizes"
    lo, hi, med = float(v.min()), float(v.max()), float(np.median(v))
    if lo == hi:
        return size(lo)
    return f"{size(lo)}–{size(hi)} (median {size(med)})"


# --- decisions ------------------------------------------------------------------------------

AMPLIFICATION_QUESTION = "Is there readahead amplification (bytes fetched well above bytes asked)?"


def amplification_decision(fetched_bytes: float, demanded_bytes: float, read_ops: float | None = None, *,
                           anchor: str = "anchor", demand: str = "demand", min_ratio: float = 2.0,
                           tolerance: float = 0.1) -> Decision:
    """Amplification yes/no/inconclusive from the anchor's fetched bytes against the bytes asked.

    yes: fetched ÷ demanded ≥ ``min_ratio``; no: ≤ 1 + ``tolerance`` (every byte fetched was
    asked for, or reads were served from the cache); inconclusive in between, or when either
    side is missing or the anchor saw nothing (data served from memory). Evidence:
    fetched_bytes, demanded_bytes, ratio, read_ops, fetched_per_read_bytes,
    demanded_per_read_bytes, min_ratio, anchor, demand.
    """
    from ..readable import size, times

    if not (min_ratio > 1 + tolerance and tolerance >= 0):
        raise UsageError(f"amplification_decision: min_ratio={min_ratio!r}, tolerance={tolerance!r}; expected "
                         "tolerance >= 0 and min_ratio > 1 + tolerance")
    ops = float(read_ops) if read_ops is not None and math.isfinite(read_ops) and read_ops > 0 else math.nan
    f, d = float(fetched_bytes), float(demanded_bytes)
    ratio = f / d if (math.isfinite(f) and math.isfinite(d) and d > 0) else math.nan
    ev = {"fetched_bytes": f, "demanded_bytes": d, "ratio": ratio, "read_ops": ops,
          "fetched_per_read_bytes": f / ops if math.isfinite(ops) else math.nan,
          "demanded_per_read_bytes": d / ops if math.isfinite(ops) else math.nan,
          "min_ratio": min_ratio, "anchor": anchor, "demand": demand}
    rests = f"{anchor} counted {size(f)} fetched; {demand} counted {size(d)} asked"
    if math.isfinite(ops):
        rests += f" in {ops:,.0f} reads"
    if not (math.isfinite(d) and d > 0):
        return Decision(AMPLIFICATION_QUESTION, "inconclusive",
                        f"{demand} counted no bytes asked, so there is nothing to compare the fetched bytes with.", ev)
    if not (math.isfinite(f) and f > 0):
        return Decision(AMPLIFICATION_QUESTION, "inconclusive",
                        f"{anchor} saw no bytes fetched while {size(d)} were asked: the reads were served from "
                        "memory (cache, tmpfs) or the anchor does not count this storage.", ev)
    return decide(AMPLIFICATION_QUESTION, yes=ratio >= min_ratio, no=ratio <= 1 + tolerance,
                  because_yes=f"{times(ratio)} the bytes asked were fetched ({rests}).",
                  because_no=f"only {times(ratio)} the bytes asked were fetched ({rests}): no more than the "
                             f"reads needed (within {tolerance:.0%}).",
                  because_inconclusive=f"{times(ratio)} the bytes asked were fetched ({rests}): above 1 but "
                                       f"below the {times(min_ratio)} this rule calls amplification.",
                  evidence=ev)


def probe_amplification(reads: pd.DataFrame, files: pd.DataFrame, counters: pd.DataFrame,
                        phases: dict[str, dict], anchor: Anchor | str = "pid_io:self/read_bytes", *,
                        page_bytes: int = 4096, min_ratio: float = 2.0) -> dict[str, Decision]:
    """:func:`amplification_decision` per advice of a readahead probe run, as notebook 03 section 9 takes it.

    Fetched: the ``anchor`` counter's increase in each advice's phase of the probe's
    ``counters.snapshots`` (:func:`probe_phase_bytes`; NaN when the snapshots do not hold it);
    asked: the probe's requested bytes and reads (:func:`probe_ways`). Returns advice → Decision.
    """
    spec = parse_counter(anchor, param="anchor") if isinstance(anchor, str) else anchor
    ways = probe_ways(reads, files, counters, phases, page_bytes)
    held = set(counters["source"] + ":" + counters["item"] + "/" + counters["counter"])
    by = probe_phase_bytes(counters, phases, spec, page_bytes) if spec.label in held else pd.Series(dtype="float64")
    out: dict[str, Decision] = {}
    for advice, asked, n_reads in zip(ways["advice"], ways["requested_bytes"], ways["reads"], strict=True):
        out[str(advice)] = amplification_decision(float(by.get(advice, math.nan)), float(asked), float(n_reads),
                                                  anchor=spec.label, demand="the probe's requests",
                                                  min_ratio=min_ratio)
    return out


def series_amplification(series: pd.DataFrame, anchor: Anchor | str, demand: Anchor | str,
                         ops: Anchor | str | None = None, *, host: str | None = None,
                         min_ratio: float = 2.0) -> Decision:
    """:func:`amplification_decision` from snapshots alone, as notebook 03 section 4 takes it with ``demand_counter``.

    Fetched: the ``anchor`` byte counter's increase over its common window
    (:func:`common_window`, :func:`increase_bytes`) on ``host`` (None: every host); asked: the
    ``demand`` byte counter over the same window (e.g. ``pid_io:<pid>/rchar``); ``ops`` the read
    operations counter (e.g. ``pid_io:<pid>/syscr``). Raises
    :class:`~workbench.errors.UsageError` when the anchor is absent or not a byte counter.
    """
    a = parse_counter(anchor, param="anchor") if isinstance(anchor, str) else anchor
    d = parse_counter(demand, param="demand") if isinstance(demand, str) else demand
    t0, t1 = common_window(series, a)
    fetched = increase_bytes(series, a, start=t0, end=t1, host=host)
    asked, _why = instrument_bytes(series, d, start=t0, end=t1, host=host)
    n_ops = math.nan
    if ops is not None:
        o = parse_counter(ops, param="ops") if isinstance(ops, str) else ops
        try:
            n_ops = increase(series, source=o.source, item=o.item, counter=o.counter, start=t0, end=t1, host=host)
        except ValueError:
            n_ops = math.nan
    return amplification_decision(fetched, asked, n_ops, anchor=a.label, demand=d.label, min_ratio=min_ratio)


def group_amplification(reads: pd.DataFrame, by: str = "advice", *, confidence: float = 0.95,
                        n_comparisons: int = 1) -> pd.DataFrame:
    """Amplification (Σ pulled ÷ Σ requested bytes) per group of a probe's reads, with an interval.

    The interval is the ratio estimator's Student-t interval (delta method: residuals
    pulled − R × requested) at ``confidence`` Bonferroni-adjusted for ``n_comparisons``.
    Returns ``by``, reads, requested_bytes, pulled_bytes, amplification, amplification_low,
    amplification_high (NaN bounds with fewer than two reads).
    """
    from scipy import stats as st

    requires(reads, by, "pulled_bytes", "request_bytes")
    if not 0 < confidence < 1 or n_comparisons < 1:
        raise UsageError(f"group_amplification: confidence={confidence!r}, n_comparisons={n_comparisons!r}; "
                         "expected 0 < confidence < 1 and n_comparisons >= 1")
    level = 1 - (1 - confidence) / n_comparisons
    rows = []
    for key, g in reads.groupby(by, sort=True):
        p = g["pulled_bytes"].to_numpy(dtype="float64")
        q = g["request_bytes"].to_numpy(dtype="float64")
        ok = np.isfinite(p) & np.isfinite(q) & (q > 0)
        p, q = p[ok], q[ok]
        n = p.size
        ratio = float(p.sum() / q.sum()) if n else math.nan
        half = math.nan
        if n >= 2:
            resid = p - ratio * q
            se = math.sqrt(float((resid**2).sum()) / (n * (n - 1))) / float(q.mean())
            half = float(st.t.ppf(0.5 + level / 2, n - 1)) * se
        rows.append({by: key, "reads": n, "requested_bytes": float(q.sum()), "pulled_bytes": float(p.sum()),
                     "amplification": ratio, "amplification_low": ratio - half, "amplification_high": ratio + half})
    return pd.DataFrame(rows, columns=[by, "reads", "requested_bytes", "pulled_bytes", "amplification",
                                       "amplification_low", "amplification_high"])


def which_amplifies(reads: pd.DataFrame, by: str = "advice", *, confidence: float = 0.95, min_reads: int = 10,
                    same_within: float = 0.1) -> Decision:
    """Does one ``by`` group (advice, position…) amplify more than another? yes/no/inconclusive.

    Per group, Σ pulled ÷ Σ requested bytes with an interval Bonferroni-adjusted for the
    k(k−1)/2 pairs (see :func:`group_amplification`). yes: the highest and the lowest groups'
    intervals are disjoint (evidence ``most``, ``least``); no: every interval lies within
    ± ``same_within`` of the pooled amplification; inconclusive otherwise, when fewer than two
    groups have ``min_reads`` reads, or when no read pulled anything. Evidence also holds ``groups`` (name → amplification, low,
    high, reads) and ``pooled_amplification``.
    """
    from ..readable import times

    question = f"Does one {by} amplify more than another?"
    requires(reads, by, "pulled_bytes", "request_bytes")
    counts = reads.groupby(by)[by].size()
    keep = sorted(str(k) for k in counts[counts >= min_reads].index)
    k = len(keep)
    ev: dict[str, object] = {"by": by, "groups_in_data": sorted(map(str, counts.index)), "min_reads": min_reads,
                             "confidence": confidence}
    if k < 2:
        have = ", ".join(f"{g} ({int(n)} reads)" for g, n in counts.items()) or "none"
        return Decision(question, "inconclusive",
                        f"the data hold fewer than two {by} groups with at least {min_reads} reads ({have}); "
                        "there is nothing to compare.", ev)
    sub = reads[reads[by].astype(str).isin(keep)].assign(**{by: lambda f: f[by].astype(str)})
    pairs = k * (k - 1) // 2
    tab = group_amplification(sub, by, confidence=confidence, n_comparisons=pairs).set_index(by)
    groups = {str(g): {"amplification": float(r.amplification), "low": float(r.amplification_low),
                       "high": float(r.amplification_high), "reads": int(r.reads)} for g, r in tab.iterrows()}
    ev["groups"] = groups
    ev["comparisons"] = pairs
    hi_g, lo_g = str(tab["amplification"].idxmax()), str(tab["amplification"].idxmin())
    ev["most"], ev["least"] = hi_g, lo_g
    a, b = groups[hi_g], groups[lo_g]
    pooled = float(sub["pulled_bytes"].sum() / sub["request_bytes"].sum())
    ev["pooled_amplification"] = pooled
    if not sub["pulled_bytes"].gt(0).any():
        return Decision(question, "inconclusive",
                        f"no read in any {by} group pulled a page into the cache, so the data cannot show which "
                        "amplifies (the files stayed in memory, e.g. tmpfs, or were never dropped).", ev)
    from ..verdicts import intervals_disjoint as _disjoint

    disjoint = _disjoint((a["low"], a["high"]), (b["low"], b["high"]))
    same = pooled > 0 and all(math.isfinite(g["low"]) and math.isfinite(g["high"])
                              and g["low"] >= pooled * (1 - same_within) and g["high"] <= pooled * (1 + same_within)
                              for g in groups.values())
    level = 1 - (1 - confidence) / pairs

    def show(g: str) -> str:
        x = groups[g]
        return f"{g} {times(x['amplification'])} [{times(x['low'])}–{times(x['high'])}]"

    return decide(question, yes=disjoint, no=same and not disjoint,
                  because_yes=f"{hi_g} pulls more per byte asked than {lo_g}: {show(hi_g)} vs {show(lo_g)} "
                              f"({level:.1%} intervals, adjusted for {pairs} comparison(s), do not overlap).",
                  because_no=f"every {by} pulls the same within ±{same_within:.0%} of the pooled "
                             f"{times(pooled)}: " + ", ".join(show(g) for g in groups) + ".",
                  because_inconclusive=f"the intervals overlap but are too wide to call the {by} groups equal: "
                                       + ", ".join(show(g) for g in groups) + f" ({level:.1%} intervals).",
                  evidence=ev)


RECONCILE_QUESTION = "Do the instruments reconcile with the anchor?"


@dataclass(frozen=True)
class ReconciliationDecision(Decision):
    """:class:`~workbench.verdicts.Decision` plus the per-instrument table (None when nothing was compared)."""

    reconciliation: Reconciliation | None = None


def reconciliation_decision(anchor_bytes: float, instruments: dict[str, float], tolerance: float = 0.06,
                            anchor: str = "anchor") -> ReconciliationDecision:
    """yes: every instrument within ``tolerance`` of the anchor; no: some are not (named);
    inconclusive: no instrument measured the window, or the anchor saw nothing.

    Instruments whose count is missing (NaN) are left out and named in the caveats. Evidence:
    anchor, anchor_bytes, tolerance, agreeing, disagreeing, max_rel_diff, ratios (name → ratio).
    """
    measured = {k: float(v) for k, v in instruments.items() if v is not None and math.isfinite(float(v))}
    missing = sorted(set(instruments) - set(measured))
    caveats = tuple(f"{m} measured nothing in this window" for m in missing)
    ev: dict[str, object] = {"anchor": anchor, "anchor_bytes": float(anchor_bytes), "tolerance": tolerance}
    if not (math.isfinite(anchor_bytes) and anchor_bytes > 0):
        return ReconciliationDecision(RECONCILE_QUESTION, "inconclusive",
                                      f"the anchor {anchor} saw no bytes in the window, so no instrument can be "
                                      "checked against it.", ev, caveats)
    if not measured:
        return ReconciliationDecision(RECONCILE_QUESTION, "inconclusive",
                                      f"no other instrument counted this window; {anchor} stands alone.", ev, caveats)
    rec = reconcile(anchor_bytes, measured, tolerance, anchor=anchor)
    ratios = dict(zip(rec.table["instrument"], rec.table["ratio_to_anchor"].astype(float), strict=True))
    ev.update(agreeing=list(rec.agreeing), disagreeing=list(rec.disagreeing),
              max_rel_diff=float(rec.table["rel_diff"].abs().max()), ratios=ratios)
    verdicts = dict(zip(rec.table["instrument"], rec.table["verdict"], strict=True))
    if rec.disagreeing:
        because = ("off the anchor by more than ±" + f"{tolerance:.0%}: "
                   + "; ".join(f"{n} {verdicts[n]}" for n in rec.disagreeing)
                   + (f"; within it: {', '.join(rec.agreeing)}" if rec.agreeing else "") + ".")
        return ReconciliationDecision(RECONCILE_QUESTION, "no", because, ev, caveats, rec)
    because = (f"all {len(rec.agreeing)} instrument(s) agree with {anchor} within ±{tolerance:.0%} "
               f"(largest difference {rec.max_rel_diff_agreeing:.1%}): {', '.join(rec.agreeing)}.")
    return ReconciliationDecision(RECONCILE_QUESTION, "yes", because, ev, caveats, rec)


OUTLIER_QUESTION = "Does any host stand out?"


def host_outliers(values: pd.Series, *, what: str = "value", threshold: float = 3.5,
                  min_hosts: int = 4, fmt: Callable[[float], str] | None = None) -> Decision:
    """Hosts whose ``values`` are far from the others: robust z = 0.6745 (x − median) ÷ MAD > ``threshold``.

    yes: some hosts exceed it (evidence ``outliers``); no: none do; inconclusive with fewer than
    ``min_hosts`` hosts (a median of three cannot single one out). ``fmt`` formats the median
    in the sentence (default: a plain number). Evidence: values, median, mad, robust_z,
    threshold, outliers.
    """
    from ..readable import number

    show = fmt or number

    v = pd.to_numeric(values, errors="coerce").dropna().astype(float)
    ev: dict[str, object] = {"what": what, "values": {str(k): float(x) for k, x in v.items()},
                             "threshold": threshold, "min_hosts": min_hosts}
    if len(v) < min_hosts:
        return Decision(OUTLIER_QUESTION, "inconclusive",
                        f"{len(v)} host(s) with {what}; at least {min_hosts} are needed to tell an outlier "
                        "from the rest.", ev)
    med = float(v.median())
    mad = float((v - med).abs().median())
    if mad > 0:
        z = 0.6745 * (v - med) / mad
    else:
        z = pd.Series(np.where(v == med, 0.0, np.inf * np.sign(v - med)), index=v.index)
    out = sorted(str(h) for h in z[z.abs() > threshold].index)
    ev.update(median=med, mad=mad, robust_z={str(k): float(x) for k, x in z.items()}, outliers=out)
    return decide(OUTLIER_QUESTION, yes=bool(out), no=not out,
                  because_yes=f"{', '.join(out)} stand(s) out on {what} (robust z above {threshold:g}; median "
                              f"{show(med)} across {len(v)} hosts).",
                  because_no=f"no host's {what} is further than robust z {threshold:g} from the median "
                             f"{show(med)} of {len(v)} hosts.",
                  because_inconclusive="", evidence=ev)


def probe_phase_bytes(counters: pd.DataFrame, phases: dict[str, dict], spec: Anchor,
                      page_bytes: int = 4096) -> pd.Series:
    """Bytes a counter named by ``spec`` moved during each phase (advice) of a probe run.

    Each phase's increase runs from its first to its last snapshot inside ``start_ts``–``end_ts``;
    NaN where the counter is absent or has fewer than two readings in the phase. Returns a
    Series advice → bytes.
    """
    requires(counters, *COLUMNS)
    sel = _select(counters, source=spec.source, item=spec.item, counter=spec.counter)
    out: dict[str, float] = {}
    scale = byte_scale(counters, spec, page_bytes) if len(sel) else math.nan
    for advice, ph in phases.items():
        try:
            t0, t1 = float(ph["start_ts"]), float(ph["end_ts"])
        except (KeyError, TypeError, ValueError):
            raise UsageError(f"probe_phase_bytes: phases[{advice!r}]={ph!r}; expected a dict with start_ts and "
                             "end_ts (seconds since the epoch), as in the capture's meta.json") from None
        win = sel[(sel["timestamp"] >= t0) & (sel["timestamp"] <= t1)]
        if win["timestamp"].nunique() < 2:
            out[str(advice)] = math.nan
            continue
        out[str(advice)] = scale * increase(win, source=spec.source, item=spec.item, counter=spec.counter,
                                            start=float(win["timestamp"].min()), end=float(win["timestamp"].max()))
    return pd.Series(out, name="bytes", dtype="float64")


def common_window(series: pd.DataFrame, spec: Anchor) -> tuple[float, float]:
    """The window every host's readings of ``spec`` cover: (latest first reading, earliest last reading).

    Raises :class:`~workbench.errors.UsageError` when no host has two readings or the hosts do not overlap.
    """
    requires(series, *COLUMNS)
    sel = _select(series, source=spec.source, item=spec.item, counter=spec.counter)
    sel = sel[sel["timestamp"].notna()]
    span = sel.groupby("host")["timestamp"].agg(["min", "max"])
    span = span[span["max"] > span["min"]]
    if span.empty:
        raise UsageError(f"counter {spec.label!r}: no host has two timestamped readings; expected a series of "
                         "snapshots")
    t0, t1 = float(span["min"].max()), float(span["max"].min())
    if not t1 > t0:
        raise UsageError(f"counter {spec.label!r}: the hosts' readings do not overlap in time "
                         f"({span['min'].max()} > {span['max'].min()}); expected snapshots over one window")
    return t0, t1


def instrument_bytes(frame: pd.DataFrame | None, spec: Anchor, *, start: float, end: float,
                     host: str | None = None, page_bytes: int = 4096) -> tuple[float, str]:
    """Bytes ``spec`` counted in the window, or (NaN, why not) when absent, not bytes, or not covering it."""
    if frame is None:
        return math.nan, f"{spec.label}: its input is absent"
    try:
        return increase_bytes(frame, spec, start=start, end=end, host=host, page_bytes=page_bytes), ""
    except UsageError as exc:
        return math.nan, str(exc)


def parse_categories(text: str, *, param: str = "path_categories") -> dict[str, str]:
    """``"name: regex; name: regex"`` → {name: regex} (the order is kept: first match wins); '' gives {}.

    A name ends at its first ``:`` (or ``=``, also accepted); the rest of the part is the regex.
    """
    out: dict[str, str] = {}
    for part in str(text).split(";"):
        if not part.strip():
            continue
        cut = min((i for i in (part.find(":"), part.find("=")) if i >= 0), default=-1)
        name, rx = (part[:cut], part[cut + 1:]) if cut >= 0 else (part, "")
        if cut < 0 or not name.strip() or not rx.strip():
            raise UsageError(f"{param}={text!r}: {part!r} is not 'name: regex'; expected e.g. "
                             "'shared map: /shared/; objects: /data/objects/'")
        try:
            re.compile(rx.strip())
        except re.error as exc:
            raise UsageError(f"{param}: {rx.strip()!r} is not a regular expression ({exc})") from None
        out[name.strip()] = rx.strip()
    return out
