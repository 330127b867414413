"""Writers of real text formats used by the simulations (kernel printf layouts, bpftrace output)."""
# ruff: noqa: UP031 - the layouts are written with the kernel's own printf formats, kept verbatim
from __future__ import annotations

import math

from ..errors import UsageError

NET_DEV_HEADER = (
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls "
    "carrier compressed\n"
)


def net_dev(ifaces: dict[str, list[int]]) -> str:
    """``/proc/net/dev`` text (net/core/net-procfs.c layout) from iface → 16 counters."""
    out = [NET_DEV_HEADER]
    for name, v in ifaces.items():
        if len(v) != 16:
            raise UsageError(f"net_dev: ifaces[{name!r}] has {len(v)} counters; expected 16 (8 receive, 8 transmit)")
        out.append(f"{name:>6}:" + "%8d %7d %4d %4d %4d %5d %10d %9d %8d %7d %4d %4d %4d %5d %7d %10d\n" % tuple(v))
    return "".join(out)


def _lat_rows(rows: list[tuple]) -> str:
    return "".join("%-14s%-12d%-16d%-16d%-16d%d\n" % r for r in rows)


def _size_rows(rows: list[tuple]) -> str:
    return "".join("%-14s%-12d%-16d%-16d%-16d%d\n" % r for r in rows)


LAT_HEADER = "item          total       avg_lat(us)     min_lat(us)     max_lat(us)     stdev(us)\n" + "-" * 83 + "\n"
SIZE_HEADER = ("item          total       avg_sz(bytes)   min_sz(bytes)   max_sz(bytes)  total_sz(bytes)\n"
               + "-" * 88 + "\n")
CAPS_HEADER = "item          total           miss            hit\n" + "-" * 49 + "\n"


def cephfs_metrics_516(m: dict) -> dict[str, str]:
    """The 5.16+ ``metrics/`` directory files (file, latency, size, caps) from a metrics dict."""
    f = "item                               total\n" + "-" * 42 + "\n"
    for k in ("total inodes", "opened files", "pinned i_caps", "opened inodes"):
        f += "%-35s%d\n" % (k, m["file"][k])
    lat = LAT_HEADER + _lat_rows([(k, *m["lat"][k]) for k in ("read", "write", "metadata", "copyfrom")])
    size = SIZE_HEADER + _size_rows([(k, *m["size"][k]) for k in ("read", "write", "copyfrom")])
    caps = CAPS_HEADER + "".join("%-14s%-16d%-16d%d\n" % (k, *m["caps"][k]) for k in ("d_lease", "caps"))
    return {"file": f, "latency": lat, "size": size, "caps": caps}


def cephfs_metrics_514(m: dict) -> str:
    """The single ``metrics`` file of ≈5.14–5.15 kernels (opened-files block with ``a / b`` cells)."""
    fi = m["file"]
    f = "item                               total\n" + "-" * 42 + "\n"
    f += "%-35s%d / %d\n" % ("opened files  / total inodes", fi["opened files"], fi["total inodes"])
    f += "%-35s%d / %d\n" % ("pinned i_caps / total inodes", fi["pinned i_caps"], fi["total inodes"])
    f += "%-35s%d / %d\n" % ("opened inodes / total inodes", fi["opened inodes"], fi["total inodes"])
    lat = LAT_HEADER + _lat_rows([(k, *m["lat"][k]) for k in ("read", "write", "metadata")])
    size = SIZE_HEADER + _size_rows([(k, *m["size"][k]) for k in ("read", "write")])
    caps = CAPS_HEADER + "".join("%-14s%-16d%-16d%d\n" % (k, *m["caps"][k]) for k in ("d_lease", "caps"))
    return f + "\n" + lat + "\n" + size + "\n" + caps


def _hist_label(lo: int) -> str:
    def h(v: int) -> str:
        for suf, p in (("E", 60), ("P", 50), ("T", 40), ("G", 30), ("M", 20), ("K", 10)):
            if v >= 1 << p and v % (1 << p) == 0:
                return f"{v >> p}{suf}"
        return str(v)

    if lo == 0:
        return "[0]"
    if lo == 1:
        return "[1]"
    return f"[{h(lo)}, {h(lo * 2)})"


def bpftrace_text(maps: dict[str, dict[str, int]], hists: dict[str, list[int]] | None = None,
                  probes: int = 1) -> str:
    """bpftrace's exit-time text output: maps sorted by value, then log2 histograms."""
    out = [f"Attaching {probes} probe{'s' if probes != 1 else ''}...\n", "\n\n"]
    for name, kv in maps.items():
        for key, v in sorted(kv.items(), key=lambda x: (x[1], x[0])):
            out.append(f"{name}[{key}]: {int(v)}\n" if key != "" else f"{name}: {int(v)}\n")
        out.append("\n")
    for name, values in (hists or {}).items():
        if not values:
            continue
        buckets: dict[int, int] = {}
        for v in values:
            lo = 0 if v <= 0 else (1 if v == 1 else 1 << int(math.floor(math.log2(v))))
            buckets[lo] = buckets.get(lo, 0) + 1
        los = sorted(buckets)
        seq, lo = [], los[0]
        while lo <= los[-1]:
            seq.append(lo)
            lo = 1 if lo == 0 else (2 if lo == 1 else lo * 2)
        top = max(buckets.values())
        out.append(f"{name}: \n")
        for lo in seq:
            c = buckets.get(lo, 0)
            bar = "@" * int(round(52 * c / top)) if top else ""
            out.append("%-16s%8d |%-52s|\n" % (_hist_label(lo), c, bar))
        out.append("\n")
    return "".join(out)
