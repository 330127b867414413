"""A last line without its line end is a reject ("incomplete last line"), never a record.

Each loader family reads a copy of a real file whose last line was cut in the
middle (as a capture still being written is): the frame holds every record of
the lines before it, and the cut line is rejected with its number and text.
Inline text given by the program is whole: its last line needs no line end.
"""
from __future__ import annotations

import gzip
import io
from pathlib import Path

import pandas as pd
import pytest

from workbench.counters import read_tsdb_csv, read_vmstat
from workbench.latency import read_latency
from workbench.models.yields import read_published
from workbench.sources import INCOMPLETE, incomplete_tail
from workbench.syscalls import native_available, read_strace

ROOT = Path(__file__).resolve().parent.parent


def cut_last_line(data: bytes) -> tuple[bytes, int, str]:
    """``data`` with its last line cut in half and no final newline: (bytes, line number, kept text)."""
    lines = data.rstrip(b"\n").split(b"\n")
    last = lines[-1][: max(1, len(lines[-1]) // 2)]
    return b"\n".join([*lines[:-1], last]), len(lines), last.decode()


def last_reject(frame: pd.DataFrame) -> tuple[int, str, str]:
    rows = frame.attrs["rejects"].rows()
    assert rows, "no reject"
    _src, line, text, reason = rows[-1]
    return line, text, reason


def test_incomplete_tail_counts_lines_as_the_loaders_do() -> None:
    assert incomplete_tail("a\nb\n") is None and incomplete_tail("a\n  ") is None and incomplete_tail("") is None
    assert incomplete_tail("a\r\nbc") == (2, "bc")
    assert incomplete_tail("a\rb\nc", newline_only=True) == (2, "c")


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
def test_latency_csv_rejects_the_cut_line(tmp_path: Path, compress: bool) -> None:
    src = ROOT / "data/01_quantized_latency/lab/calls.csv"
    data, n, kept = cut_last_line(src.read_bytes())
    p = tmp_path / ("calls.csv.gz" if compress else "calls.csv")
    p.write_bytes(gzip.compress(data) if compress else data)
    full = read_latency(src)
    cut = read_latency(p)
    assert last_reject(cut) == (n, kept, INCOMPLETE)
    assert len(cut) == len(full) - 1  # the cut record (…,0.0031459 → …,0.00) is not a latency of 0.0
    assert cut["latency_s"].tolist() == full["latency_s"].tolist()[:-1]
    # inline text is whole: its last line is judged by its content (here: no latency field), not by its end
    inline = read_latency(data.decode(), format="csv").attrs["rejects"].rows()
    assert [r[2:] for r in inline] == [(kept, inline[0][3])] and INCOMPLETE not in inline[0][3]
    assert len(read_latency(src.read_text().rstrip("\r\n"), format="csv")) == len(full)


def test_latency_stream_and_big_file_paths_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import workbench.latency._read as R

    src = ROOT / "data/01_quantized_latency/lab/calls.csv"
    data, n, kept = cut_last_line(src.read_bytes())
    p = tmp_path / "calls.csv"
    p.write_bytes(data)
    small = read_latency(p)
    monkeypatch.setattr(R, "STREAM_BYTES", 100)  # read in blocks, as a big file is
    monkeypatch.setattr(R, "BLOCK_BYTES", 1000)
    streamed = read_latency(p, progress=False)
    assert streamed.attrs.get("streamed") is True
    assert last_reject(streamed) == (n, kept, INCOMPLETE)
    assert streamed["latency_s"].tolist() == small["latency_s"].tolist()
    assert last_reject(read_latency(io.BytesIO(data))) == (n, kept, INCOMPLETE)


def test_hey_csv_rejects_the_cut_line(tmp_path: Path) -> None:
    src = ROOT / "tests/data/latency/hey_index_8col.csv"
    data, n, kept = cut_last_line(src.read_bytes())
    p = tmp_path / "hey.csv"
    p.write_bytes(data)
    cut = read_latency(p, format="hey")
    assert last_reject(cut) == (n, kept, INCOMPLETE)
    assert len(cut) == len(read_latency(src, format="hey")) - 1


def test_counters_reject_the_cut_line(tmp_path: Path) -> None:
    src = ROOT / "tests/data/counters/proc/vmstat.txt"
    data, n, kept = cut_last_line(src.read_bytes())
    p = tmp_path / "vmstat.txt"
    p.write_bytes(data)
    full, cut = read_vmstat(src), read_vmstat(p)
    assert last_reject(cut) == (n, kept, INCOMPLETE)
    assert cut["counter"].tolist() == full["counter"].tolist()[:-1]
    src = ROOT / "data/03_readahead_amplification/sim/tsdb_export.csv"
    data, n, kept = cut_last_line(src.read_bytes())
    p = tmp_path / "tsdb.csv"
    p.write_bytes(data)
    assert last_reject(read_tsdb_csv(p)) == (n, kept, INCOMPLETE)
    assert len(read_tsdb_csv(p)) == len(read_tsdb_csv(src)) - 1


def test_tables_reject_the_cut_line(tmp_path: Path) -> None:
    src = ROOT / "data/04_event_loop_yields/published.csv"
    data, n, kept = cut_last_line(src.read_bytes())
    p = tmp_path / "published.csv"
    p.write_bytes(data)
    full, cut = read_published(src), read_published(p)
    assert last_reject(cut) == (n, kept, INCOMPLETE)
    pd.testing.assert_frame_equal(cut.reset_index(drop=True), full.iloc[:-1].reset_index(drop=True),
                                  check_like=True)


@pytest.mark.parametrize("native", [False, True], ids=["reference", "native"])
@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
def test_strace_scanners_reject_the_cut_line_alike(tmp_path: Path, native: bool, compress: bool) -> None:
    if native and not native_available():
        pytest.skip("the C scanner is not built")
    lines = (ROOT / "tests/data/strace/threads_futex.txt").read_bytes().split(b"\n")
    body = b"\n".join(lines[: next(i for i, ln in enumerate(lines) if ln.startswith(b"% time"))]).rstrip() + b"\n"
    data, n, kept = cut_last_line(body)
    whole_p, cut_p = tmp_path / "whole.txt", tmp_path / ("cut.txt.gz" if compress else "cut.txt")
    whole_p.write_bytes(body)
    cut_p.write_bytes(gzip.compress(data) if compress else data)
    full = read_strace(whole_p, native=native, check_summary=False)
    cut = read_strace(cut_p, native=native, check_summary=False)
    assert last_reject(cut) == (n, kept, INCOMPLETE)
    assert cut.attrs["lines"] == n
    kept_rows = full[full["line"] < n].reset_index(drop=True)
    assert cut["line"].tolist() == kept_rows["line"].tolist()
