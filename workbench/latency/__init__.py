"""Latency loaders: one entry point, :func:`read_latency`, for the files people have.

Two kinds of frame come back (``frame.attrs["kind"]``):

**samples** (:data:`SAMPLES_SCHEMA`) — one row per request:

==============  =======  =====================================================
column          dtype    meaning
==============  =======  =====================================================
latency_s       float64  request latency, seconds (always present; NaN where a
                         plain CSV lists a request with an empty latency: no reply)
timestamp_s     float64  request (scheduled) start, epoch seconds; seconds from
                         the run's start when attrs["timestamp_origin"] is
                         "relative" (hey); absent when the source has no time
ok              bool     the source's success flag, where it has one
end_timestamp_s float64  request end, epoch seconds (k6, which stamps the end)
(others)                 carried through (plain CSV: unchanged)
==============  =======  =====================================================

**distribution** (:data:`DISTRIBUTION_SCHEMA`) — pre-aggregated histograms or
percentile tables; ``percentile`` and/or ``count`` are present:

==================  =======  =================================================
column              dtype    meaning
==================  =======  =================================================
latency_s           float64  bucket upper value / percentile value, seconds
percentile          float64  cumulative percentile 0–100 at latency_s
count               int64    samples in this bucket (not cumulative)
cumulative_count    int64    samples <= latency_s
timestamp_s         float64  epoch seconds of the row (locust)
interval_start_s    float64  interval start, seconds (hlog; epoch or relative)
interval_length_s   float64  interval length, seconds (hlog)
interval_max_s      float64  the log's Interval_Max, taken as ms, in seconds (hlog)
bucket_start_s      float64  bucket lower edge, seconds (fortio)
tag                 string   series label (hlog Tag=, NaN when untagged; wrk
                             block "recorded"/"uncorrected"; locust Name)
==================  =======  =================================================

Formats (``format=``; detected from content when omitted, extension as a hint):

- ``csv`` → samples. Plain CSV/TSV; latency unit from the column name
  (``latency_s``/``_ms``/``_us``/``_ns``, also ``elapsed_ms``, ``duration_us``…) or
  ``unit=``; timestamps ``timestamp_s``, ``ts_ms``, ``time_us``, ``epoch_ns`` or ISO 8601;
  a unit-less numeric timestamp is read by magnitude (median < 1e11 s, < 1e14 ms,
  < 1e17 µs, else ns; below 1e8 a unit is required). An empty latency cell is a
  request without a reply: kept with latency_s NaN (attrs["no_latency"]). Other
  columns carried, typed as pandas would type them. siege's ``--log`` header
  (Date & Time, Trans, Elap Time, … Resp Time …) is refused: one row per run.
- ``hlog`` → distribution: latency_s, count, cumulative_count, percentile (within
  the interval), interval_start_s, interval_length_s, tag. Payload unit: ``unit=``,
  else inferred from decoded max ÷ Interval_Max (which writers print in ms):
  ≈1e6 → ns, ≈1e3 → µs, ≈1 → ms; otherwise an error asks for ``unit=``.
  Relative timestamps are shifted by BaseTime / StartTime (attrs["base_time_s"]).
- ``hgrm`` → distribution: latency_s, percentile (the file's 0–1 fraction × 100),
  cumulative_count, count. Value column in ms unless ``unit=`` (the HdrHistogram
  tools' and wrk2's convention); values that are all whole numbers need ``unit=``.
- ``wrk`` (wrk and wrk2 text) → distribution: wrk2's detailed spectrum (as hgrm,
  tag "recorded"/"uncorrected") when printed, else the ``Latency Distribution``
  percentile lines (latency_s, percentile, tag). Unit suffixes us/ms/s/m/h, where
  **m is minutes**. Summary numbers in attrs["summary"].
- ``ghz`` → samples from ``details`` (latency ns, RFC3339 timestamp; ok = no error
  and status OK; columns status, error); without details a distribution from
  ``histogram`` (latency_s = bucket mark, count, percentile) or else
  ``latencyDistribution`` (latency_s, percentile).
- ``fortio`` → distribution from DurationHistogram.Data: latency_s = bucket End,
  bucket_start_s, count, percentile (fortio's cumulative Percent); the reported
  Percentiles in attrs["reported_percentiles_s"].
- ``k6`` → samples from ``Point`` records of ``http_req_duration`` (ms):
  timestamp_s = point time − duration (k6 stamps the end), ok from the
  ``expected_response`` tag, tag columns carried. Other metrics counted in
  attrs["skipped"].
- ``locust`` → distribution from stats_history: one row per (second, name,
  percentile column); percentiles are **cumulative over the run so far** (ms)
  in a default history file, but cover Locust's ~10 s sliding window in a
  ``--csv-full-history`` file (attrs["cumulative"], attrs["percentiles_over"]);
  timestamp_s, tag (Name), request_type, user_count, requests_per_s,
  failures_per_s, total_request_count, total_failure_count. Rows before the first
  request (N/A) and empty-window rows are counted in attrs["skipped"].
- ``jmeter`` → samples: elapsed (ms) → latency_s, timeStamp (epoch ms or date) →
  timestamp_s, success → ok; Latency/Connect/IdleTime → first_byte_s, connect_s,
  idle_s; the other columns carried with their JTL names.
- ``hey`` → samples: response-time (s) → latency_s, offset (s from the run's
  start) → timestamp_s (relative), status-code → status_code; the phase columns
  as dns_dialup_s, dns_s, request_write_s, response_delay_s, response_read_s.
- ``hey_text`` (hey's default output) → distribution of its printed quantiles:
  percentile 0 (Fastest), the ``NN% in X secs`` lines, 100 (Slowest); its
  histogram in attrs["histogram"].
- ``ab`` (ab's report) → distribution of its percentage table (integer ms),
  percentile 0 = Connection Times Total min; ``ab_percentiles`` (``-e`` CSV) →
  distribution, percentiles 0–100; ``ab_gnuplot`` (``-g`` TSV) → samples
  (ttime ms, start in whole epoch seconds, rows in ab's total-time order).
- ``curl`` (``-w 'key=value …'`` lines with ``time_total=`` or ``total=``) and
  ``curl_json`` (``-w '%{json}'`` lines) → samples: latency_s = time_total,
  the other cumulative times as ``<name>_s``, status_code, ok.
- ``siege`` → samples from its per-request lines (``-v``), else a distribution
  of its summary (percentile 0 = Shortest, 100 = Longest transaction); 0.01 s
  resolution. ``siege_log`` (its ``--log``, one row per run) is refused: use
  ``read_siege_log``.
- ``httperf`` → distribution of connection times (min, median, max as
  percentiles 0, 50, 100; tag "connection").
- ``locust_stats`` (``PREFIX_stats.csv``) → distribution per Name and
  percentile column; ``locust_failures`` is refused (no times) but is read
  beside a stats file into the totals.
- ``values`` (one number per line, no header) → samples; ``unit=`` required.
- ``k6_summary`` (``--summary-export`` or handleSummary JSON) → distribution of
  k6's stats of ``metric`` (min 0, med 50, p(N), max 100); http_req_failed's
  ``passes`` (the failed requests) into attrs["totals"].
- ``jmeter_xml`` (XML JTL) → samples as ``jmeter``: t → latency_s, ts →
  timestamp_s, s → ok, lt/ct/it → first_byte_s/connect_s/idle_s, the other
  attributes under their CSV JTL names; nested sub-samples counted, not rows.

**Samples or distribution.** A tool that prints only quantiles gives a
distribution frame of *its* quantiles (latency_s, percentile), never
pseudo-samples; its minimum and maximum are percentiles 0 and 100 where it
prints them. attrs["totals"] of a summary holds the run's counts — requests,
failures, non_2xx, errors {kind: n}, status_codes, and which of them the
latency figures include — and attrs["warnings"] says when any request failed
or was not 2xx, so failures never look like successes.

**Resolution.** Every frame has attrs["resolution_s"]: the step of the latency
values as the source writes them (ab and JTL integer ms: 0.001; hey 4 decimals:
0.0001; siege 0.01; wrk the coarsest printed step; None for full floats or the
relative steps of HdrHistogram) and attrs["resolution_rule"] saying why.
Modes or quanta at that step are the instrument, not the system.

**Units.** hgrm values with no fractional part at all (``4227.000``) are what
unscaled output looks like and are refused without ``unit=``; a footer
StdDeviation above Max is flagged (attrs["warnings"] and a reject of that line).
A ``values`` file always needs ``unit=``.

Every frame carries attrs "kind", "format", "source", "rejects" (a
:class:`workbench.schema.Rejects`: source, line, text and reason of each record
that could not be parsed; ``len()`` counts them, ``.frame()`` is the table) and
"skipped" (records that parsed but are not latency records, by what they are).
``strict=True`` raises :class:`workbench.errors.ParseError` for the earliest reject
of the file. A bad argument raises :class:`workbench.errors.UsageError`, a file
that is not what the format expects :class:`~workbench.errors.ParseError`, a
path that names nothing :class:`~workbench.errors.InputNotFoundError`.

Incomplete last line: in every line-oriented format (all but the ghz, fortio
and k6 summary JSON documents and JMeter XML, which their parsers judge whole),
a file's or stream's last line without its line end — a capture cut while it
was written — is a reject ("incomplete last line"), never a record: a latency
``0.0031459`` cut to ``0.`` is not read as 0.0. Compressed files are judged by
their decompressed text, big CSV files read in blocks alike. Text passed
inline by the program is whole: its last line needs no line end.

Inputs are read by :mod:`workbench.sources` (gzip, bzip2, xz and zstd files are
decompressed). Big inputs: a plain CSV larger than ``STREAM_BYTES`` (64 MiB) is
read in blocks of whole records with a byte progress bar; ``cache=True`` keeps
each file's result in the :class:`workbench.cache.Cache` of loader "latency"
(``$WORKBENCH_CACHE_DIR/latency``), keyed by the file's bytes, the options and
this package's code, so a second load of the same bytes skips parsing; a list or
glob of files shows a progress bar over the files and concatenates them with a
``file`` column.
"""
from __future__ import annotations

from ._detect import FORMATS
from ._read import STREAM_BYTES, read_latency
from ._schemas import DISTRIBUTION_SCHEMA, SAMPLES_SCHEMA
from ._siege import read_siege_log

__all__ = ["DISTRIBUTION_SCHEMA", "FORMATS", "SAMPLES_SCHEMA", "STREAM_BYTES", "read_latency", "read_siege_log"]
