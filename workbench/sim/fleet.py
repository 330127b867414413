"""Simulated front-end fleet reading tiny config files from CephFS through an 8 MiB readahead.

What it models (all parameters in :class:`FleetParams`, defaults from the investigation):

- Each node serves requests (Poisson arrivals at ``NodeSpec.requests_per_s``). Every request
  reads a handful of small per-entity config files (``Category``: reads per request, bytes the
  application asks for, file size, probability the read misses the page cache). A miss
  fetches ``min(file size, read_ahead_kb, object size)`` rounded up to pages from the OSDs —
  the netfs readahead expansion to the object/stripe unit, bounded by the readahead window.
- Nodes still migrating run a replication job that reads whole 4 MiB objects at
  ``migration_mib_per_s`` on top of the request path.
- Counters are cumulative since mount: the history before the window is ``mount_age_s`` of
  the request path plus ``migration_age_s`` of the migration job.
- Instruments: the CephFS debugfs metrics (anchor, ``size/read total_sz``), ``/proc/net/dev``
  (private ``eth1`` carries storage traffic plus messenger overhead; public ``eth0`` carries
  requests), a TSDB scraping the private rx counter ``tsdb_scrape_offset_s`` after each
  snapshot, and bpftrace maps on the profiled node: demand (``ceph_read_iter``), an early
  readahead hook that sees ``profiler_early_fraction`` of each fetch (the pre-expansion
  window), a late hook (``page_cache_ra_unbounded``) that sees the whole fetch, and an
  ``openat`` trace that only sees files opened inside the window.
- A ``cache_trap`` capture: ``md5sum`` of the already-cached shared map on the profiled node.

:func:`simulate_fleet` writes the bundle (snapshot logs, probes, TSDB CSV, node table,
params.json) in the real formats; see ``data/03_readahead_amplification/README.md``.
"""
from __future__ import annotations

import csv
import json
import math
from dataclasses import asdict, dataclass, field, replace
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UsageError
from . import _formats as fmt

KIB = 1024
MIB = 1024 * 1024


@dataclass(frozen=True)
class NodeSpec:
    """One front-end node: request rate, migration state and the migration job's read rate."""

    host: str
    requests_per_s: float
    state: str  # "migrating" or "switched"
    migration_mib_per_s: float = 0.0
    kernel_layout: str = "5.16"  # CephFS metrics layout written: "5.16" (directory) or "5.14" (single file)


@dataclass(frozen=True)
class Category:
    """A kind of file the per-request path reads."""

    name: str
    path: str  # format string with {i}
    reads_per_request: float
    request_bytes: int
    file_kib_mean: float
    miss_prob: float
    n_files: int


DEFAULT_NODES = (
    NodeSpec("fe01", 2.4, "switched"),
    NodeSpec("fe02", 0.69, "switched"),
    NodeSpec("fe03", 2.6, "switched"),
    NodeSpec("fe04", 1.9, "switched"),
    NodeSpec("fe05", 1.4, "migrating", 5.6),
    NodeSpec("fe06", 1.8, "migrating", 6.3, kernel_layout="5.14"),
    NodeSpec("fe07", 2.1, "migrating", 8.4),
)

DEFAULT_CATEGORIES = (
    Category("identity/auth", "/mnt/cephfs/config/identity/e{i:04d}.json", 1.0, 4096, 166, 0.80, 400),
    Category("limits/policy", "/mnt/cephfs/config/limits/e{i:04d}.yaml", 1.0, 8192, 183, 0.80, 400),
    Category("per-entity rules", "/mnt/cephfs/config/rules/e{i:04d}.rules", 1.0, 6144, 168, 0.75, 400),
    Category("other", "/mnt/cephfs/config/misc/f{i:03d}.dat", 1.0, 12288, 237, 0.90, 150),
    Category("shared map", "/mnt/cephfs/config/shared/map.bin", 0.5, 40960, 203 * 1024, 0.023, 1),
)


@dataclass(frozen=True)
class FleetParams:
    """Every knob of the fleet simulation (defaults reproduce the investigation's figures)."""

    seed: int = 5
    start_ts: float = 1764489600.0  # first snapshot, seconds since the epoch
    interval_s: float = 60.0  # seconds between snapshots
    n_intervals: int = 6  # snapshots - 1 (6 × 60 s = the 6-minute profiling window)
    read_ahead_kb: int = 8192  # bdi read_ahead_kb of the CephFS mount
    object_size_bytes: int = 4 * MIB  # RADOS object / stripe unit: one OSD read never exceeds it
    page_bytes: int = 4096
    nodes: tuple[NodeSpec, ...] = DEFAULT_NODES
    categories: tuple[Category, ...] = DEFAULT_CATEGORIES
    file_size_sigma: float = 0.35  # lognormal spread of file sizes around file_kib_mean
    entity_zipf_s: float = 0.8  # popularity skew of entities
    write_kib_per_request: float = 26.0  # bytes written to CephFS per request (mean, exponential)
    mount_age_s: float = 98000.0  # request-path history before the window
    migration_age_s: float = 9000.0  # migration-job history before the window
    msgr_overhead_fraction: float = 0.015  # private rx/tx bytes on top of the payload (framing, headers)
    private_tx_per_rx_fraction: float = 0.02  # private tx bytes caused per received byte (requests, acks)
    heartbeat_bytes_per_s: float = 2000.0  # background storage traffic each way
    public_rx_kib_per_request: float = 100.0  # client request bytes (mean over nodes)
    public_rx_node_sigma: float = 0.3  # lognormal spread of request size between nodes
    public_tx_kib_per_request: float = 20.0  # response bytes
    tsdb_scrape_interval_s: float = 15.0
    tsdb_scrape_offset_s: float = 7.0  # TSDB samples lag the snapshots by this much
    profiled_host: str = "fe02"
    profiler_early_fraction: float = 1 / 30  # share of each fetch the pre-expansion hook sees
    kworker_fraction: float = 0.15  # fetches charged to a kworker (async readahead)
    opened_before_window_fraction: float = 0.7  # files whose descriptors predate the trace
    remount_host: str = "fe03"  # a node whose CephFS client remounts mid-window ('' for none)
    remount_after_interval: int = 3  # the remount happens inside this interval (1-based)
    cache_trap_miss_fraction: float = 0.002  # share of the shared map not cached during md5sum
    fsid: str = "6c1a3f2e-9b1d-4c55-8f0e-2d7f3e8a9b10"

    def to_json(self) -> dict[str, Any]:
        """Every field as plain JSON-ready values (nodes and categories as dicts)."""
        return asdict(self)


def _page_round(x: np.ndarray, page: int) -> np.ndarray:
    return np.ceil(np.asarray(x, dtype="float64") / page) * page


def _lognormal_mean(rng: np.random.Generator, mean: float, sigma: float, n: int) -> np.ndarray:
    return rng.lognormal(math.log(mean) - sigma**2 / 2, sigma, n)


@dataclass
class _NodeEvents:
    host: str
    # fetch events (OSD reads): time, bytes, category index (-1 migration), file index, comm
    f_t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    f_b: np.ndarray = field(default_factory=lambda: np.zeros(0))
    f_cat: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    f_file: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    # demand events (read syscalls): time, bytes, cat, file
    d_t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    d_b: np.ndarray = field(default_factory=lambda: np.zeros(0))
    d_cat: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    d_file: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    req_t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    w_t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    w_b: np.ndarray = field(default_factory=lambda: np.zeros(0))


def _popularity(p: FleetParams, n_files: int) -> np.ndarray:
    w = 1.0 / np.arange(1, n_files + 1) ** p.entity_zipf_s
    return w / w.sum()


def _file_sizes(p: FleetParams, rng: np.random.Generator) -> list[np.ndarray]:
    """File sizes per category: lognormal, rescaled so the popularity-weighted mean is ``file_kib_mean``."""
    out = []
    for c in p.categories:
        if c.n_files == 1:
            out.append(np.array([c.file_kib_mean * KIB]))
        else:
            raw = _lognormal_mean(rng, c.file_kib_mean * KIB, p.file_size_sigma, c.n_files)
            raw *= c.file_kib_mean * KIB / float((raw * _popularity(p, c.n_files)).sum())
            out.append(np.ceil(raw))
    return out


def _simulate_node(p: FleetParams, node: NodeSpec, sizes: list[np.ndarray], t0: float, t1: float,
                   rng: np.random.Generator) -> _NodeEvents:
    ev = _NodeEvents(node.host)
    dur = t1 - t0
    n_req = rng.poisson(node.requests_per_s * dur)
    req_t = np.sort(rng.uniform(t0, t1, n_req))
    ev.req_t = req_t
    ra = p.read_ahead_kb * KIB
    ft, fb, fc, ff, dt, db, dc, df = [], [], [], [], [], [], [], []
    for ci, c in enumerate(p.categories):
        base = int(math.floor(c.reads_per_request))
        k = base + (rng.uniform(size=n_req) < (c.reads_per_request - base)).astype(int)
        t = np.repeat(req_t, k)
        n = t.size
        if c.n_files > 1:
            files = rng.choice(c.n_files, size=n, p=_popularity(p, c.n_files))
        else:
            files = np.zeros(n, int)
        dt.append(t)
        db.append(np.full(n, float(c.request_bytes)))
        dc.append(np.full(n, ci))
        df.append(files)
        miss = rng.uniform(size=n) < c.miss_prob
        fetch = _page_round(np.minimum(np.minimum(sizes[ci][files[miss]], ra), p.object_size_bytes), p.page_bytes)
        ft.append(t[miss])
        fb.append(fetch)
        fc.append(np.full(miss.sum(), ci))
        ff.append(files[miss])
    if node.migration_mib_per_s > 0:
        n_obj = rng.poisson(node.migration_mib_per_s * MIB * dur / p.object_size_bytes)
        t = np.sort(rng.uniform(t0, t1, n_obj))
        ft.append(t)
        fb.append(np.full(n_obj, float(p.object_size_bytes)))
        fc.append(np.full(n_obj, -1))
        ff.append(np.arange(n_obj))
    order_f = np.argsort(np.concatenate(ft), kind="stable")
    ev.f_t, ev.f_b = np.concatenate(ft)[order_f], np.concatenate(fb)[order_f]
    ev.f_cat, ev.f_file = np.concatenate(fc)[order_f], np.concatenate(ff)[order_f]
    order_d = np.argsort(np.concatenate(dt), kind="stable")
    ev.d_t, ev.d_b = np.concatenate(dt)[order_d], np.concatenate(db)[order_d]
    ev.d_cat, ev.d_file = np.concatenate(dc)[order_d], np.concatenate(df)[order_d]
    ev.w_t = req_t
    ev.w_b = _page_round(rng.exponential(p.write_kib_per_request * KIB, n_req), p.page_bytes)
    return ev


def _cum(t: np.ndarray, v: np.ndarray, at: float) -> float:
    return float(v[t <= at].sum())


def _metrics(p: FleetParams, ev: _NodeEvents, at: float, hist: dict, since: float | None,
             rng: np.random.Generator) -> dict:
    """Metrics values at time ``at`` (cumulative since mount, or since ``since`` after a remount)."""
    lo = -math.inf if since is None else since
    mf = (ev.f_t <= at) & (ev.f_t > lo)
    mw = (ev.w_t <= at) & (ev.w_t > lo)
    h = hist if since is None else {k: 0.0 for k in hist}
    r_ops = int(mf.sum() + h["read_ops"])
    r_sz = int(ev.f_b[mf].sum() + h["read_bytes"])
    w_ops = int(mw.sum() + h["write_ops"])
    w_sz = int(ev.w_b[mw].sum() + h["write_bytes"])
    md_ops = int(round((ev.req_t <= at).sum() * 0.3 + h["meta_ops"]))

    def lat(n: int, base_us: float) -> tuple:
        if n == 0:
            return (0, 0, 0, 0, 0)
        return (n, int(base_us), int(base_us * 0.2), int(base_us * 9), int(base_us * 0.8))

    def size(n: int, total: int, lo_b: int, hi_b: int) -> tuple:
        if n == 0:
            return (0, 0, 0, 0, 0)
        return (n, total // n, lo_b, hi_b, total)

    fmax = int(ev.f_b.max()) if ev.f_b.size else 0
    fmin = int(ev.f_b.min()) if ev.f_b.size else 0
    return {
        "file": {"total inodes": 2400, "opened files": 180, "pinned i_caps": 2300, "opened inodes": 175},
        "lat": {"read": lat(r_ops, 2300), "write": lat(w_ops, 5200), "metadata": lat(md_ops, 900),
                "copyfrom": lat(0, 0)},
        "size": {"read": size(r_ops, r_sz, fmin, fmax), "write": size(w_ops, w_sz, p.page_bytes, 1 * MIB),
                 "copyfrom": size(0, 0, 0, 0)},
        "caps": {"d_lease": (180, 12, 40211 + md_ops), "caps": (2300, 310, 512000 + 4 * md_ops)},
    }


def _net(p: FleetParams, ev: _NodeEvents, at: float, hist: dict, t0: float, pub_kib: float) -> dict[str, list[int]]:
    age = at - t0 + hist["age_s"]
    R = _cum(ev.f_t, ev.f_b, at) + hist["read_bytes"]
    W = _cum(ev.w_t, ev.w_b, at) + hist["write_bytes"]
    nreq = (ev.req_t <= at).sum() + hist["requests"]
    rx = R * (1 + p.msgr_overhead_fraction) + p.heartbeat_bytes_per_s * age
    tx = W * (1 + p.msgr_overhead_fraction) + p.private_tx_per_rx_fraction * R + p.heartbeat_bytes_per_s * age
    prx, ptx = nreq * pub_kib * KIB, nreq * p.public_tx_kib_per_request * KIB

    def row(rxb: float, txb: float, mtu: int = 8900) -> list[int]:
        return [int(rxb), int(rxb // mtu) + 1, 0, 0, 0, 0, 0, 0, int(txb), int(txb // mtu) + 1, 0, 0, 0, 0, 0, 0]

    lo_b = int(age * 310)
    return {"lo": row(lo_b, lo_b, 65536), "eth0": row(prx, ptx, 1500), "eth1": row(rx, tx)}


def _history(p: FleetParams, node: NodeSpec, ev: _NodeEvents, dur: float) -> dict:
    cfg = ev.f_cat >= 0
    scale_m = p.mount_age_s / dur
    scale_g = p.migration_age_s / dur
    return {
        "read_bytes": ev.f_b[cfg].sum() * scale_m + ev.f_b[~cfg].sum() * scale_g,
        "read_ops": cfg.sum() * scale_m + (~cfg).sum() * scale_g,
        "write_bytes": ev.w_b.sum() * scale_m,
        "write_ops": ev.w_b.size * scale_m,
        "meta_ops": ev.req_t.size * 0.3 * scale_m,
        "requests": ev.req_t.size * scale_m,
        "age_s": p.mount_age_s,
    }


def _client_dir(p: FleetParams, i: int) -> str:
    return f"/sys/kernel/debug/ceph/{p.fsid}.client{4150 + i}"


def _write_snapshot_log(p: FleetParams, node: NodeSpec, idx: int, ev: _NodeEvents, hist: dict,
                        times: list[float], pub_kib: float, out: Path, rng: np.random.Generator) -> None:
    t0 = times[0]
    remount_t = None
    if node.host == p.remount_host and 1 <= p.remount_after_interval <= p.n_intervals:
        a, b = times[p.remount_after_interval - 1], times[p.remount_after_interval]
        remount_t = a + 0.6 * (b - a)
    cdir = _client_dir(p, idx)
    parts = []
    for ts in times:
        since = remount_t if (remount_t is not None and ts > remount_t) else None
        m = _metrics(p, ev, ts, hist, since, rng)
        head = f"#== snapshot ts={ts:.3f} host={node.host} path="
        if node.kernel_layout == "5.14":
            parts.append(f"{head}{cdir}/metrics\n{fmt.cephfs_metrics_514(m)}")
        else:
            for name, text in fmt.cephfs_metrics_516(m).items():
                parts.append(f"{head}{cdir}/metrics/{name}\n{text}")
        parts.append(f"{head}/proc/net/dev\n{fmt.net_dev(_net(p, ev, ts, hist, t0, pub_kib))}")
        parts.append(f"{head}/sys/class/bdi/ceph-{idx + 1}/read_ahead_kb\n{p.read_ahead_kb}\n")
    (out / f"{node.host}.snapshots").write_text("".join(parts))


def _probe_maps(p: FleetParams, ev: _NodeEvents, t0: float, t1: float, rng: np.random.Generator,
                out: Path, prefix: str, with_openat: bool = True, extra_demand: dict | None = None) -> None:
    def path(ci: int, fi: int) -> str:
        if ci < 0:
            return f"/mnt/cephfs/data/objects/o{fi:06d}"
        return p.categories[ci].path.format(i=fi)

    md = (ev.d_t >= t0) & (ev.d_t <= t1)
    mf = (ev.f_t >= t0) & (ev.f_t <= t1)
    workers = [f"frontd-w{i}" for i in range(1, 5)]
    demand: dict[str, int] = {}
    reads: dict[str, int] = {}
    for ci, fi, b in zip(ev.d_cat[md], ev.d_file[md], ev.d_b[md], strict=True):
        k = path(int(ci), int(fi))
        demand[k] = demand.get(k, 0) + int(b)
        reads[k] = reads.get(k, 0) + 1
    for k, (b, n) in (extra_demand or {}).items():
        demand[k] = demand.get(k, 0) + b
        reads[k] = reads.get(k, 0) + n
    fetch: dict[str, int] = {}
    calls: dict[str, int] = {}
    early: dict[str, int] = {}
    by_comm: dict[str, int] = {}
    sizes: list[int] = []
    opens: dict[str, int] = {}
    for ci, fi, b in zip(ev.f_cat[mf], ev.f_file[mf], ev.f_b[mf], strict=True):
        k = path(int(ci), int(fi))
        fetch[k] = fetch.get(k, 0) + int(b)
        calls[k] = calls.get(k, 0) + 1
        x = b * p.profiler_early_fraction / p.page_bytes
        pages = math.floor(x) + (1 if rng.uniform() < x - math.floor(x) else 0)
        early[k] = early.get(k, 0) + pages * p.page_bytes
        comm = "replicator" if ci < 0 else (
            "kworker/u8:2" if rng.uniform() < p.kworker_fraction else workers[int(rng.integers(len(workers)))])
        by_comm[comm] = by_comm.get(comm, 0) + int(b)
        sizes.append(int(b))
    seen: set[str] = set()
    for ci, fi in zip(ev.d_cat[md], ev.d_file[md], strict=True):
        k = path(int(ci), int(fi))
        if k in seen:
            continue
        seen.add(k)
        if rng.uniform() >= p.opened_before_window_fraction:
            key = f"{workers[int(rng.integers(len(workers)))]}, {k}"
            opens[key] = opens.get(key, 0) + 1
    (out / f"{prefix}ceph_read_iter.bt.txt").write_text(
        fmt.bpftrace_text({"@demand_bytes": demand, "@reads": reads}, probes=1))
    if not with_openat:
        return
    (out / f"{prefix}ceph_readahead.bt.txt").write_text(fmt.bpftrace_text({"@ra_bytes": early}, probes=1))
    (out / f"{prefix}page_cache_ra_unbounded.bt.txt").write_text(
        fmt.bpftrace_text({"@ra_bytes": fetch, "@ra_calls": calls, "@ra_bytes_by_comm": by_comm},
                          {"@ra_size_bytes": sizes}, probes=1))
    (out / f"{prefix}openat.bt.txt").write_text(fmt.bpftrace_text({"@opens": opens}, probes=1))


def check_params(p: FleetParams) -> FleetParams:
    """Return ``p`` when the simulation can run with it, else raise UsageError naming the field."""
    hosts = [n.host for n in p.nodes]
    if not hosts or len(set(hosts)) != len(hosts):
        raise UsageError(f"FleetParams.nodes: hosts {hosts}; expected at least one node, each host once")
    if p.profiled_host not in hosts:
        raise UsageError(f"FleetParams.profiled_host={p.profiled_host!r}; expected one of the nodes {hosts}")
    if p.remount_host not in ("", *hosts):
        raise UsageError(f"FleetParams.remount_host={p.remount_host!r}; expected '' (no remount) or one of {hosts}")
    layouts = {n.host: n.kernel_layout for n in p.nodes if n.kernel_layout not in ("5.16", "5.14")}
    if layouts:
        raise UsageError(f"NodeSpec.kernel_layout {layouts}; expected '5.16' (metrics/ folder) or '5.14' (one file)")
    positive = {"interval_s": p.interval_s, "n_intervals": p.n_intervals, "read_ahead_kb": p.read_ahead_kb,
                "object_size_bytes": p.object_size_bytes, "page_bytes": p.page_bytes,
                "tsdb_scrape_interval_s": p.tsdb_scrape_interval_s}
    bad = [f"{k}={v!r}" for k, v in positive.items() if not v > 0]
    if bad:
        raise UsageError(f"FleetParams {', '.join(bad)}: expected > 0")
    if sum(c.n_files == 1 for c in p.categories) != 1:
        raise UsageError("FleetParams.categories: expected exactly one category with n_files=1 (the shared map "
                         f"the cache trap reads), got {[c.name for c in p.categories if c.n_files == 1]}")
    return p


def simulate_fleet(out_dir: str | Path, params: FleetParams | None = None, **overrides: Any) -> Path:
    """Write a simulated fleet bundle under ``out_dir`` and return its path.

    Layout: ``snapshots/<host>.snapshots`` (marker logs: CephFS metrics, /proc/net/dev,
    read_ahead_kb), ``probes/<host>_{ceph_read_iter,ceph_readahead,page_cache_ra_unbounded,
    openat}.bt.txt`` (bpftrace text), ``tsdb_export.csv``, ``nodes.csv``,
    ``cache_trap/`` (snapshots and demand probe around an md5sum) and ``params.json``.
    ``overrides`` replace fields of ``params`` (e.g. ``read_ahead_kb=128``); an unknown
    field or a value the simulation cannot run with raises :class:`~workbench.errors.UsageError`.
    """
    fields = {f.name for f in dataclass_fields(FleetParams)}
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise UsageError(f"simulate_fleet: unknown parameter(s) {unknown}; expected fields of FleetParams: "
                         f"{sorted(fields)}")
    p = check_params(replace(params or FleetParams(), **overrides))
    out = Path(out_dir)
    for sub in ("snapshots", "probes", "cache_trap"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(p.seed)
    sizes = _file_sizes(p, rng)
    times = [p.start_ts + i * p.interval_s for i in range(p.n_intervals + 1)]
    t0, t1 = times[0], times[-1]
    # events run a little past the last snapshot so the lagging TSDB scrape sees traffic
    t_end = t1 + p.tsdb_scrape_offset_s + p.tsdb_scrape_interval_s
    tsdb_rows: list[tuple] = []
    with open(out / "nodes.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["host", "migration_state"])
        for n in p.nodes:
            w.writerow([n.host, n.state])
    pub_sizes = _lognormal_mean(rng, p.public_rx_kib_per_request, p.public_rx_node_sigma, len(p.nodes))
    for idx, node in enumerate(p.nodes):
        ev = _simulate_node(p, node, sizes, t0, t_end, rng)
        window = ev.f_t <= t1
        hist = _history(p, node, _NodeEvents(node.host, ev.f_t[window], ev.f_b[window], ev.f_cat[window],
                                             ev.f_file[window], w_t=ev.w_t[ev.w_t <= t1],
                                             w_b=ev.w_b[ev.w_t <= t1], req_t=ev.req_t[ev.req_t <= t1]), t1 - t0)
        _write_snapshot_log(p, node, idx, ev, hist, times, float(pub_sizes[idx]), out / "snapshots", rng)
        # the TSDB scrapes the private rx counter and the service's request counter, lagging the snapshots
        ts = t0 - 2 * p.tsdb_scrape_interval_s + p.tsdb_scrape_offset_s
        while ts <= t1 + p.tsdb_scrape_offset_s + 1e-9:
            rx = _net(p, ev, ts, hist, t0, float(pub_sizes[idx]))["eth1"][0]
            nreq = int((ev.req_t <= ts).sum() + hist["requests"])
            tsdb_rows.append((f"{ts:.3f}", node.host, "node_network_receive_bytes_total", "device=eth1", rx))
            tsdb_rows.append((f"{ts:.3f}", node.host, "frontend_requests_total", "", nreq))
            ts += p.tsdb_scrape_interval_s
        if node.host == p.profiled_host:
            _probe_maps(p, ev, t0, t1, rng, out / "probes", f"{node.host}_")
            _cache_trap(p, node, idx, ev, hist, times, float(pub_sizes[idx]), sizes, out / "cache_trap", rng)
    with open(out / "tsdb_export.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["timestamp", "host", "metric", "labels", "value"])
        w.writerows(sorted(tsdb_rows))
    (out / "params.json").write_text(json.dumps(p.to_json(), indent=1, default=str) + "\n")
    return out


def _cache_trap(p: FleetParams, node: NodeSpec, idx: int, ev: _NodeEvents, hist: dict, times: list[float],
                pub_kib: float, sizes: list[np.ndarray], out: Path, rng: np.random.Generator) -> None:
    """md5sum of the cached shared map, 10 s after the window: huge demand, tiny fetch."""
    ci = next(i for i, c in enumerate(p.categories) if c.n_files == 1)
    size = int(sizes[ci][0])
    a = times[-1] + 10.0
    b = a + 4.0
    missing = _page_round(np.array([size * p.cache_trap_miss_fraction]), p.page_bytes)[0]
    md5 = _NodeEvents(node.host, f_t=np.concatenate([ev.f_t, [a + 1.0]]), f_b=np.concatenate([ev.f_b, [missing]]),
                      f_cat=np.concatenate([ev.f_cat, [ci]]), f_file=np.concatenate([ev.f_file, [0]]),
                      d_t=ev.d_t, d_b=ev.d_b, d_cat=ev.d_cat, d_file=ev.d_file, req_t=ev.req_t,
                      w_t=ev.w_t, w_b=ev.w_b)
    # events in the simulated stream end shortly after the last snapshot: extend with a few requests
    _write_snapshot_log(replace(p, remount_host=""), node, idx, md5, hist, [a, b], pub_kib, out, rng)
    path = p.categories[ci].path.format(i=0)
    n_reads = size // (32 * KIB)
    _probe_maps(p, md5, a, b, rng, out, f"{node.host}_", with_openat=False,
                extra_demand={path: (size, n_reads)})
