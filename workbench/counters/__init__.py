"""IO and readahead counters: loaders for snapshot files, snapshot series, deltas and rates.

Loaders (one module per source family; each returns the long counters frame
:data:`COUNTERS_SCHEMA` — timestamp, host, source, instance, item, counter, value, unit, kind):

- :func:`read_cephfs_metrics` — CephFS kernel client debugfs ``metrics`` (every layout)
- :func:`read_net_dev`, :func:`read_vmstat`, :func:`read_diskstats`, :func:`read_pid_io` — procfs
- :func:`read_read_ahead_kb` — ``/sys/class/bdi/*/read_ahead_kb``
- :func:`read_bpftrace` — bpftrace maps, ``hist()``/``lhist()`` and ``-f json`` (maps + buckets)
- :func:`read_fincore`, :func:`read_vmtouch` — page-cache residency (own schema)
- :func:`read_tsdb_csv` — a time-series database's CSV export
- :func:`read_node_attributes` — per-host attributes (migration state)

Series: :func:`read_series` (marker logs or snapshot directories), :func:`deltas`
(reset/wrap reported), :func:`window_totals`. Analyses live in
:mod:`workbench.counters.analysis` (also those of the readahead probe, whose capture is
written and read by its owner, :mod:`workbench.lab.readahead`).

Every loader accepts a path, glob, folder, list, stream or text; rejected lines travel in
``frame.attrs["rejects"]`` (:class:`~workbench.schema.Rejects`), and ``strict=True`` raises
the first bad line of an input as :class:`~workbench.errors.ParseError`.
"""
from ._common import COUNTERS_SCHEMA
from .bdi import read_read_ahead_kb
from .bpftrace import HIST_SCHEMA, BpftraceOutput, read_bpftrace
from .cephfs import read_cephfs_metrics
from .nodes import NODES_SCHEMA, read_node_attributes
from .procfs import read_diskstats, read_net_dev, read_pid_io, read_vmstat
from .residency import RESIDENCY_SCHEMA, read_fincore, read_vmtouch
from .series import DELTAS_SCHEMA, deltas, read_series, window_totals
from .tsdb import read_tsdb_csv

__all__ = [
    "COUNTERS_SCHEMA",
    "DELTAS_SCHEMA",
    "HIST_SCHEMA",
    "NODES_SCHEMA",
    "RESIDENCY_SCHEMA",
    "BpftraceOutput",
    "deltas",
    "read_bpftrace",
    "read_cephfs_metrics",
    "read_diskstats",
    "read_fincore",
    "read_net_dev",
    "read_node_attributes",
    "read_pid_io",
    "read_read_ahead_kb",
    "read_series",
    "read_tsdb_csv",
    "read_vmstat",
    "read_vmtouch",
    "window_totals",
]
