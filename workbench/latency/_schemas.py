"""The two documented kinds of latency frame: raw samples and distributions."""
from __future__ import annotations

from ..schema import Column, Schema

SAMPLES_SCHEMA = Schema(
    name="latency_samples",
    doc=(
        "One row per request (attrs['kind'] == 'samples'). Columns beyond these are "
        "carried through from the source (plain CSV: unchanged; tools: renamed with units)."
    ),
    columns=(
        Column("latency_s", "float", "s",
               "request latency; NaN where the source lists a request without one (plain CSV empty cell: no reply)"),
        Column(
            "timestamp_s", "float", "s",
            "request (scheduled) start; epoch seconds, or seconds from the start of the run "
            "when attrs['timestamp_origin'] == 'relative'; NaN or absent when the source has none",
            required=False,
        ),
        Column("ok", "bool", "", "the source's success flag, where it has one", required=False),
        Column("end_timestamp_s", "float", "s", "request end, epoch seconds (k6)", required=False),
    ),
)

DISTRIBUTION_SCHEMA = Schema(
    name="latency_distribution",
    doc=(
        "A pre-aggregated distribution (attrs['kind'] == 'distribution'): one row per "
        "histogram bucket or per reported percentile. 'percentile' and/or 'count' are "
        "present depending on the format."
    ),
    columns=(
        Column("latency_s", "float", "s", "bucket value (upper edge) or percentile value"),
        Column("percentile", "float", "%", "cumulative percentile 0-100 at latency_s", required=False),
        Column("count", "int", "", "samples in this bucket (not cumulative)", required=False),
        Column("cumulative_count", "int", "", "samples <= latency_s", required=False),
        Column("timestamp_s", "float", "s", "epoch seconds of the row (locust history)", required=False),
        Column("interval_start_s", "float", "s", "interval start, epoch or relative (hlog)", required=False),
        Column("interval_length_s", "float", "s", "interval length (hlog)", required=False),
        Column("interval_max_s", "float", "s", "the log's Interval_Max read as ms (hlog)", required=False),
        Column("bucket_start_s", "float", "s", "bucket lower edge (fortio)", required=False),
        Column("tag", "string", "", "series label (hlog Tag=, NaN untagged; wrk2 block; locust name)", required=False),
    ),
)
