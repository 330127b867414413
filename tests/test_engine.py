"""engine="dask": many files load to a dask frame equal to the pandas path, rejects kept apart."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")

from workbench import engine  # noqa: E402
from workbench.counters import read_series  # noqa: E402
from workbench.errors import InputNotFoundError, ParseError, SchemaError, UsageError  # noqa: E402
from workbench.latency import read_latency  # noqa: E402
from workbench.schema import Rejects, SideTable, rejects_of  # noqa: E402
from workbench.syscalls import read_strace  # noqa: E402

DATA = Path(__file__).parent / "data"
HLOGS = sorted((DATA / "latency").glob("*.hlog"))
TRACES = [DATA / "strace" / n for n in ("tricky.txt", "ttt.txt", "single.txt", "threads_futex.txt")]
FF_SET = sorted((DATA / "strace" / "ff").glob("trace.*"))
PROC = DATA / "counters" / "proc"


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=2,
                                       **engine.LOOPBACK_HTTP)
    cl = distributed.Client(cluster, set_as_default=True)
    yield cl
    cl.close()
    cluster.close()


def test_default_is_a_local_in_process_cluster() -> None:
    try:
        distributed.Client.current()
        pytest.skip("a Dask client already exists in this process")
    except ValueError:
        pass
    try:
        ddf = read_latency(HLOGS[:3], engine="dask")
        cl = distributed.Client.current()
        assert cl.scheduler.address.startswith("inproc://")
        assert len(cl.scheduler_info()["workers"]) == 1
        assert engine.get_client() is cl  # reused, not a second cluster
        _check_equal(ddf.compute(), read_latency(HLOGS[:3]))
    finally:
        engine._close_local()
    with pytest.raises(ValueError):
        distributed.Client.current()


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The per-part pandas frames joined the way the dask frame is: categories unioned in order."""
    cats = [c for c, t in frames[0].dtypes.items() if isinstance(t, pd.CategoricalDtype)]
    out = pd.concat([f.assign(**{c: f[c].astype(object) for c in cats}) for f in frames], ignore_index=True)
    for c in cats:
        u = pd.api.types.union_categoricals([f[c].array for f in frames], ignore_order=True)
        out[c] = pd.Categorical(out[c], categories=u.categories)
    return out


def _check_equal(got: pd.DataFrame, want: pd.DataFrame) -> None:
    got = got.reset_index(drop=True)
    assert got.dtypes.to_dict() == want.dtypes.to_dict()
    pd.testing.assert_frame_equal(got, want)


def _bad_copy(src: Path, dst: Path, line: str) -> Path:
    dst.write_text(src.read_text() + line)
    return dst


def test_latency_files_equal_pandas_path_and_rejects_reachable(client, tmp_path: Path) -> None:
    assert len(HLOGS) >= 3
    bad = _bad_copy(HLOGS[2], tmp_path / "bad.hlog", "not,an,interval\n")
    files = [*HLOGS, bad]
    ddf = read_latency(files, engine="dask")
    assert isinstance(ddf, dd.DataFrame) and ddf.npartitions == len(files)
    want = read_latency(files)  # the pandas path for several files: concatenated with `file`
    assert list(ddf.columns) == list(want.columns) and "file" in ddf.columns
    assert ddf.dtypes.to_dict() == want.dtypes.to_dict()
    _check_equal(ddf.compute(), want)
    rej = engine.rejects(ddf)
    assert isinstance(rej, Rejects) and len(rej) == 1
    assert rej.frame()["source"].tolist() == [str(bad)] and rej.frame()["text"].tolist() == ["not,an,interval"]
    pd.testing.assert_frame_equal(rej.frame(), rejects_of(want).frame())
    both = engine.compute(ddf)
    assert len(both) == len(want) and isinstance(both.attrs["rejects"], Rejects) and len(both.attrs["rejects"]) == 1
    assert both.attrs["rejects"] == rej
    assert [p["format"] for p in both.attrs["parts"]] == ["hlog"] * len(files)


def test_latency_strict_raises_parse_error_at_compute(client, tmp_path: Path) -> None:
    bad = _bad_copy(HLOGS[2], tmp_path / "bad.hlog", "not,an,interval\n")
    ddf = read_latency([HLOGS[0], bad, HLOGS[1]], engine="dask", strict=True)
    with pytest.raises(ParseError, match="bad.hlog"):
        ddf.compute()


def test_strace_files_and_ff_set(client, tmp_path: Path) -> None:
    bad = _bad_copy(TRACES[2], tmp_path / "bad.txt", "this is not strace output\n")
    sources = [*TRACES, *FF_SET, bad]
    ddf = read_strace(sources, engine="dask")
    # one partition per file, the -ff set as one partition merged by time
    assert ddf.npartitions == len(TRACES) + 2
    want = _concat([read_strace(p) for p in TRACES] + [read_strace(FF_SET), read_strace(bad)])
    got = ddf.compute()
    _check_equal(got, want)
    ff_rows = got.iloc[sum(len(read_strace(p)) for p in TRACES):][: len(read_strace(FF_SET))]
    assert ff_rows["timestamp_s"].is_monotonic_increasing and ff_rows["pid"].nunique() == len(FF_SET)
    rej = engine.rejects(ddf)
    assert len(rej) == 1 and rej.rows()[0][0] == str(bad)
    assert rej.rows()[0][2] == "this is not strace output"


def _log(path: Path, host: str, t0: float, extra: str = "") -> Path:
    snaps = []
    for k, ts in enumerate((t0, t0 + 10, t0 + 20)):
        for name, proc_path in (("net_dev.txt", "/proc/net/dev"), ("vmstat.txt", "/proc/vmstat"),
                                ("diskstats.txt", "/proc/diskstats"), ("pid_io.txt", "/proc/4242/io")):
            text = (PROC / name).read_text()
            snaps.append(f"#== snapshot ts={ts + 0.001 * k} host={host} path={proc_path}\n{text}")
    path.write_text("".join(snaps) + extra)
    return path


def test_counter_snapshot_logs(client, tmp_path: Path) -> None:
    logs = [_log(tmp_path / f"fe0{i}.snapshots", f"fe0{i}", 1000.0 + i) for i in (1, 2, 3)]
    logs.append(_log(tmp_path / "fe04.snapshots", "fe04", 1004.0,
                     "#== snapshot ts=1100 host=fe04 path=/proc/unknown_thing\nwhat 1\n"))
    ddf = read_series(str(tmp_path), engine="dask")  # a directory of logs: one partition each
    assert ddf.npartitions == 4
    got = ddf.compute()
    _check_equal(got, _concat([read_series(p) for p in logs]))
    # the same rows as the pandas path, which merges every log by time
    keys = ["timestamp", "host", "source", "instance", "item", "counter"]
    pandas = read_series(str(tmp_path))
    pd.testing.assert_frame_equal(got.sort_values(keys, kind="stable").reset_index(drop=True), pandas)
    assert engine.rejects(ddf).frame()["source"].tolist() == [str(logs[3])]
    pd.testing.assert_frame_equal(engine.rejects(ddf).frame(), rejects_of(pandas).frame())


def test_scheduler_address_and_errors(tmp_path: Path) -> None:
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=1, host="127.0.0.1",
                                  protocol="tcp://", **engine.LOOPBACK_HTTP) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        ddf = read_latency(HLOGS[:3], engine="dask", client=cluster.scheduler_address)
        cl = distributed.Client.current()
        try:
            assert cl.scheduler.address == cluster.scheduler_address
            _check_equal(ddf.compute(), read_latency(HLOGS[:3]))
            bad = _bad_copy(HLOGS[2], tmp_path / "bad.hlog", "not,an,interval\n")
            strict = read_latency([HLOGS[0], bad], engine="dask", strict=True, client=cl)
            with pytest.raises(ParseError, match=r"bad.hlog:\d+: .*'not,an,interval'"):
                strict.compute()  # the error crosses the wire with its file, line and text
        finally:
            cl.close()
    with pytest.raises(UsageError, match="engine='spark'"):
        read_latency(HLOGS[:3], engine="spark")
    with pytest.raises(UsageError, match="expected one of 'pandas', 'dask'"):
        read_strace(TRACES, engine="Dask")
    with pytest.raises(ValueError, match="reads files"):
        read_strace(TRACES[0].read_text(), engine="dask")
    with open(HLOGS[0]) as stream, pytest.raises(ValueError, match="reads files"):
        read_latency(stream, engine="dask")
    with pytest.raises(ValueError, match="reads files"):
        read_series(_log(tmp_path / "a.snapshots", "h", 1.0).read_text(), engine="dask")


def test_files_with_different_columns_are_named(client) -> None:
    ddf = read_latency([DATA / "latency" / "jmeter_HTMLReportTestFile.csv",
                        DATA / "latency" / "jmeter_HTMLReportFalseTestFile.csv"], engine="dask")
    with pytest.raises(SchemaError, match="jmeter_HTMLReportFalseTestFile.csv.*responseCode"):
        ddf.compute()


def test_rejects_needs_the_loaders_frame(client) -> None:
    ddf = read_latency(HLOGS[:3], engine="dask")
    with pytest.raises(UsageError, match="frame a loader returned"):
        engine.rejects(ddf[ddf["latency_s"] > 0])


def _loader_with_table_attrs(part: int) -> pd.DataFrame:
    """A part as a loader gives it, side tables in attrs as values or (older loaders) as DataFrames."""
    frame = pd.DataFrame({"x": [part, part + 1]})
    rows = [(f"part{part}", 3, "junk", "not a number")] if part else []
    frame.attrs["rejects"] = Rejects.from_rows(rows) if part % 2 else Rejects.from_rows(rows).frame()
    frame.attrs["messages"] = SideTable(pd.DataFrame({"m": [part]})) if part % 2 else pd.DataFrame({"m": [part]})
    frame.attrs["format"] = "demo"
    return frame


def test_parts_may_carry_rejects_as_values_or_frames(client) -> None:
    ddf = engine.dask_frame([0, 1, 2, 3], _loader_with_table_attrs)
    assert ddf.compute()["x"].tolist() == [0, 1, 1, 2, 2, 3, 3, 4]
    rej = engine.rejects(ddf)
    assert isinstance(rej, Rejects)
    assert rej.rows() == [(f"part{i}", 3, "junk", "not a number") for i in (1, 2, 3)]
    out = engine.compute(ddf)
    assert out.attrs["rejects"] == rej
    assert [p["format"] for p in out.attrs["parts"]] == ["demo"] * 4
    assert [p["messages"].frame()["m"].tolist() for p in out.attrs["parts"]] == [[0], [1], [2], [3]]
    assert all(isinstance(p["messages"], SideTable) for p in out.attrs["parts"])
    with pytest.raises(InputNotFoundError, match="no files to read"):
        engine.dask_frame([], _loader_with_table_attrs)
    with pytest.raises(UsageError, match="client=3: expected None, a scheduler address or a Client"):
        engine.get_client(3)  # type: ignore[arg-type]
