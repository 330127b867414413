"""Detection matrix: every real tool output × auto-detection, and every file × every other format.

Each file must be recognised as its own format (or cleanly refused, with the reason
named), and forcing any other format on it must raise a ParseError — never a
frame read as the wrong thing.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from workbench.errors import ParseError, UsageError
from workbench.latency import FORMATS, read_latency
from workbench.latency._detect import detect_format
from workbench.sources import read_path

DATA = Path(__file__).parent / "data"

#: file → format detected; a value (fmt, message) means the format is refused with that message
EXPECTED: dict[str, str | tuple[str, str]] = {
    "formats/ab_404_report.txt": "ab",
    "formats/ab_gnuplot.tsv": "ab_gnuplot",
    "formats/ab_percentiles.csv": "ab_percentiles",
    "formats/ab_report.txt": "ab",
    "formats/curl_json.jsonl": "curl_json",
    "formats/curl_time_total.txt": ("values", "nothing says the unit; pass unit="),
    "formats/curl_w.txt": "curl",
    "formats/hdrh_ms_scaled.hgrm": "hgrm",
    "formats/hdrh_us_unscaled.hgrm": ("hgrm", "every Value is a whole number"),
    "formats/hey.csv": "hey",
    "formats/hey_404_summary.txt": "hey_text",
    "formats/hey_refused_summary.txt": "hey_text",
    "formats/hey_summary.txt": "hey_text",
    "formats/httperf_connreset_summary.txt": "httperf",
    "formats/httperf_summary_ok.txt": "httperf",
    "formats/jmeter_BatchTestLocal.jtl": "jmeter_xml",
    "formats/locust_failures.csv": ("locust_failures", "holds no latencies"),
    "formats/locust_stats.csv": "locust_stats",
    "formats/siege.log": ("siege_log", "this is siege's --log file"),
    "formats/siege_summary_stderr.txt": "siege",
    "formats/siege_verbose_stdout.txt": "siege",
    "formats/siege_verbose_summary_stderr.txt": "siege",
    "formats/wrk_404_latency.txt": "wrk",
    "formats/wrk_latency.txt": "wrk",
    "latency/fortio_grpc_ping_v0.9.0.json": "fortio",
    "latency/fortio_httpbin_v1.57.3.json": "fortio",
    "latency/ghz_routeguide_unavailable.json": "ghz",
    "latency/ghz_sayhello_report2.json": "ghz",
    "latency/hdrh_py_interval_48.131.csv.hgrm": "hgrm",
    "latency/hdrh_py_interval_48.131.hgrm": "hgrm",
    "latency/hey_404_8col.csv": "hey",
    "latency/hey_index_8col.csv": "hey",
    "latency/jHiccup-2.0.6.logV1.hlog": "hlog",
    "latency/jHiccup-2.0.7S.logV2.hlog": "hlog",
    "latency/jmeter_HTMLReportFalseTestFile.csv": "jmeter",
    "latency/jmeter_HTMLReportTestFile.csv": "jmeter",
    "latency/k6_docs_json_output.json": "k6",
    "latency/k6_learn_results.json": "k6",
    "latency/locust_full_history_stats_history.csv": "locust",
    "latency/locust_stats_history.csv": "locust",
    "latency/raphael.hlog": "hlog",
    "latency/tagged-Log.logV2.hlog": "hlog",
    "latency/tagged-non-monotonic.hlog": "hlog",
    "latency/wrk2_readme_latency.txt": "wrk",
    "latency/wrk2_readme_u_latency_stall.txt": "wrk",
    "latency/wrk_c64_latency.txt": "wrk",
    "latency/wrk_latency.txt": "wrk",
}


def test_the_matrix_covers_every_sample_file():
    files = {str(p.relative_to(DATA)) for d in ("formats", "latency") for p in (DATA / d).iterdir()
             if p.is_file() and p.suffix not in (".md", ".py")}
    assert files == set(EXPECTED)
    assert {(v if isinstance(v, str) else v[0]) for v in EXPECTED.values()} <= set(FORMATS)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_auto_detection(name):
    path = DATA / name
    want = EXPECTED[name]
    fmt = want if isinstance(want, str) else want[0]
    assert detect_format(read_path(path).text, str(path)) == fmt
    if isinstance(want, str):
        df = read_latency(path)
        assert df.attrs["format"] in (fmt, "wrk2")
        assert "resolution_s" in df.attrs and df.attrs["resolution_rule"]
    else:
        with pytest.raises(ParseError, match=want[1]) as e:
            read_latency(path)
        assert path.name in str(e.value)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_no_file_is_read_as_another_format(name):
    """Forcing any other format on a file raises a ParseError naming the file."""
    path = DATA / name
    want = EXPECTED[name]
    own = want if isinstance(want, str) else want[0]
    accepted = []
    for fmt in sorted(FORMATS):
        if fmt == own:
            continue
        try:
            read_latency(path, format=fmt)
        except (ParseError, UsageError) as e:
            assert path.name in str(e) or isinstance(e, UsageError)
            continue
        accepted.append(fmt)
    assert accepted == []



@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_damaged_files_fail_only_with_the_error_family(name):
    """Cut, chopped, shuffled and byte-flipped copies of each file: a frame or a WorkbenchError, nothing else."""
    import random

    from workbench.errors import WorkbenchError

    rnd = random.Random(name)
    text = read_path(DATA / name).text
    lines = text.splitlines()
    variants = ["\n".join(lines[: len(lines) // 2]) + "\n", "\n".join(ln[:-1] for ln in lines) + "\n",
                "\n".join(rnd.sample(lines, len(lines))) + "\n", "\n".join(lines[:3]) + "\n"]
    for _ in range(6):
        ch = list(text)
        for _k in range(5):
            ch[rnd.randrange(len(ch))] = rnd.choice("0,.x\n\t{}\"%-: ")
        variants.append("".join(ch))
    for v in variants:
        for kw in ({}, {"unit": "ms"}):
            try:
                read_latency(v, **kw)
            except WorkbenchError:
                pass


@pytest.mark.parametrize(("text", "line", "expected"), [
    ("\nnot a load tool\nat all\n", 2, "cannot tell the latency format"),
    ("latency\n1\n2\n", 1, "has no unit in its name; pass unit="),
    ("0.1\n0.2\n", 1, "nothing says the unit; pass unit="),
    ("       Value     Percentile TotalCount 1/(1-Percentile)\n\n     400.000 0.000000000000          1           1.00\n"
     "     600.000 1.000000000000          2\n", 4, "every Value is a whole number"),
])
def test_ambiguous_text_is_refused_with_file_line_and_expectation(text, line, expected):
    with pytest.raises(ParseError, match=expected) as e:
        read_latency(text)
    assert e.value.line == line and str(e.value).startswith(f"<text>:{line}:")
