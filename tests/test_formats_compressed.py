"""Compressed inputs (gzip, bzip2, xz, zstd) read as their content, by magic bytes, for every loader."""
from __future__ import annotations

import bz2
import gzip
import io
import lzma
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from workbench.counters import read_series
from workbench.errors import ParseError
from workbench.latency import read_latency
from workbench.syscalls import read_strace
from workbench.syscalls._read import native_available

DATA = Path(__file__).parent / "data"


def _zstd(data: bytes) -> bytes:
    out = pa.BufferOutputStream()
    with pa.CompressedOutputStream(out, "zstd") as f:
        f.write(data)
    return out.getvalue().to_pybytes()


COMPRESS = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress, "zst": _zstd}


def _compressed(tmp_path: Path, src: Path, kind: str, suffix: bool = True) -> Path:
    out = tmp_path / (src.name + (f".{kind}" if suffix else ""))
    if not suffix:
        out = tmp_path / f"{src.stem}-{kind}{src.suffix}"
    out.write_bytes(COMPRESS[kind](src.read_bytes()))
    return out


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))


@pytest.mark.parametrize("kind", sorted(COMPRESS))
@pytest.mark.parametrize("suffix", [True, False], ids=["suffix", "magic-only"])
@pytest.mark.parametrize("native", [False, True] if native_available() else [False])
def test_compressed_strace_reads_like_the_plain_file(tmp_path, kind, suffix, native):
    src = DATA / "strace" / "single.txt"
    plain = read_strace(src, native=native)
    packed = read_strace(_compressed(tmp_path, src, kind, suffix), native=native)
    assert len(plain) > 10
    _same(plain, packed)
    assert len(packed.attrs["rejects"]) == len(plain.attrs["rejects"])


def test_compressed_strace_is_streamed_in_blocks(tmp_path, monkeypatch):
    """A compressed trace goes through the scanner block by block, never decompressed whole."""
    import workbench.syscalls._read as r

    src = DATA / "strace" / "single.txt"
    packed = _compressed(tmp_path, src, "gz")
    monkeypatch.setattr(r, "BLOCK_BYTES", 256)
    monkeypatch.setattr(r, "REF_BLOCK_BYTES", 256)
    sizes: list[int] = []
    real = r._blocks

    def spy(*a, **k):
        for b in real(*a, **k):
            sizes.append(len(b))
            yield b

    monkeypatch.setattr(r, "_blocks", spy)
    df = read_strace(packed, native=False)
    _same(df, read_strace(src, native=False))
    assert len(sizes) > 3 and max(sizes) < src.stat().st_size


def test_gzip_strace_stream_is_decompressed():
    src = DATA / "strace" / "single.txt"
    df = read_strace(io.BytesIO(gzip.compress(src.read_bytes())))
    _same(df, read_strace(src))


def test_damaged_gzip_strace_names_the_file(tmp_path):
    bad = tmp_path / "trace.txt.gz"
    bad.write_bytes(gzip.compress((DATA / "strace" / "single.txt").read_bytes())[:60])
    with pytest.raises(ParseError, match=r"trace\.txt\.gz.*damaged gzip data"):
        read_strace(bad, native=False)


@pytest.mark.parametrize("kind", sorted(COMPRESS))
@pytest.mark.parametrize("name", ["formats/hey_summary.txt", "formats/ab_gnuplot.tsv", "formats/curl_json.jsonl",
                                  "latency/wrk_latency.txt"])
def test_compressed_latency_files(tmp_path, kind, name):
    src = DATA / name
    _same(read_latency(src), read_latency(_compressed(tmp_path, src, kind, suffix=False)))


@pytest.mark.parametrize("kind", sorted(COMPRESS))
def test_compressed_counter_snapshots(tmp_path, kind):
    src = DATA / "formats" / "snapshots_ns"
    dst = tmp_path / "snap"
    shutil.copytree(src, dst)
    for f in dst.iterdir():
        if f.suffix == ".txt":
            f.with_name(f.name + f".{kind}").write_bytes(COMPRESS[kind](f.read_bytes()))
            f.unlink()
    (dst / "README.md").unlink(missing_ok=True)
    a = read_series(src)
    b = read_series(dst)
    _same(a, b)
