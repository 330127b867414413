"""fincore (util-linux 2.38.1) and vmtouch (1.3.1) outputs captured on this machine."""
from __future__ import annotations

from pathlib import Path

import pytest

from workbench.counters import read_fincore, read_vmtouch
from workbench.errors import ParseError

DATA = Path(__file__).parent / "data" / "counters" / "residency"


@pytest.mark.parametrize("name", ["fincore_default.txt", "fincore_bytes.txt", "fincore_raw_noheader.txt", "fincore.json"])
def test_fincore_variants_agree_on_pages(name: str) -> None:
    df = read_fincore(DATA / name).set_index("file")
    assert df.loc["res_a.bin", "resident_pages"] == 4  # one 4 KiB read at offset 0 pulled 4 pages
    assert df.loc["res_a.bin", "resident_bytes"] == 16384
    assert df.loc["res_b.txt", "resident_pages"] == 1
    exact = name in ("fincore_bytes.txt", "fincore_raw_noheader.txt")
    assert df.loc["res_a.bin", "size_bytes"] == (2048000 if exact else 2 * 2**20)
    assert bool(df.loc["res_a.bin", "exact"]) is exact


def test_vmtouch_summary_and_verbose_bars_with_carriage_returns() -> None:
    s = read_vmtouch(DATA / "vmtouch_default.txt")
    assert s["file"].tolist() == ["<total>"] and s["resident_pages"].iloc[0] == 5 and s["total_pages"].iloc[0] == 501
    v = read_vmtouch(DATA / "vmtouch_verbose.txt").set_index("file")
    assert v.loc["res_a.bin", "resident_pages"] == 4 and v.loc["res_a.bin", "total_pages"] == 500
    assert v.loc["<total>", "resident_pages"] == 5


def test_vmtouch_kv_line() -> None:
    kv = "Files=1 Directories=0 ResidentPages=489 TotalPages=489 ResidentSize=2002944 TotalSize=2002944 ResidentPercent=100 Elapsed=0.00011\n"
    df = read_vmtouch(kv)
    assert df["resident_bytes"].iloc[0] == 2002944 and df["resident_pages"].iloc[0] == 489


def test_broken_inputs() -> None:
    df = read_fincore("  RES PAGES  SIZE FILE\n  36K     9 34.4K a.bin\n  4K x 3B b\n")
    assert len(df) == 1 and len(df.attrs["rejects"]) == 1
    with pytest.raises(ParseError):
        read_fincore("{not json\n")
    with pytest.raises(ParseError, match="no vmtouch"):
        read_vmtouch("hello\n")


def test_name_without_bar_is_reported_at_its_own_line() -> None:
    text = "a.bin\n[OO  ] 2/4\nb.bin\n           Resident Pages: 2/4  8K/16K  50%\nc.bin\n"
    df = read_vmtouch(text)
    rej = df.attrs["rejects"].frame()
    assert rej[["line", "text"]].values.tolist() == [[3, "b.bin"], [5, "c.bin"]]
    with pytest.raises(ParseError, match=r"<text>:3: file name line without a residency bar"):
        read_vmtouch(text, strict=True)


def test_bad_sizes_and_json_shapes_are_named() -> None:
    from workbench.counters.residency import human_bytes
    from workbench.errors import UsageError

    with pytest.raises(UsageError, match=r"not a size: '12Q'; expected bytes or a number with a K/M/G"):
        human_bytes("12Q")
    with pytest.raises(ParseError, match=r"'fincore' list, got a dict"):
        read_fincore('{"fincore": {"res": "4K"}}\n')
    df = read_fincore('{"fincore": [{"res": "4K", "pages": 1, "size": "4K", "file": "a"}, {"res": "4K", "pages": null}]}\n')
    assert len(df) == 1 and len(df.attrs["rejects"]) == 1
