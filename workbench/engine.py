"""Many files through Dask: one lazy partition per file, the loader's own schema.

:func:`dask_frame` turns a list of parts (a file, or a group of files read
together) and a per-part pandas loader into a dask DataFrame with one partition
per part. Its columns and dtypes are exactly those of the loader's pandas frame
(the loader's schema, validated per part): the first part is read once up
front, on the cluster, to learn them (the ``meta``); every other part must give
the same columns and dtypes, else a :class:`~workbench.errors.SchemaError` names
it. That first part stays on the cluster as partition 0's data (only its empty
meta comes back), so no file is parsed twice; it is held there as long as the
frame lives. Categorical columns whose categories differ by part (for example
strace's ``syscall``) come back as the union of categories in partition order.

Each partition keeps the attrs its loader gave it (a
:class:`~workbench.schema.Rejects` in ``attrs["rejects"]``, other side tables as
:class:`~workbench.schema.SideTable`); ``ddf.compute()`` keeps them only where
every part carries the same (pandas' rule for concatenation), so the rejects of
a fleet are reached through this module: :func:`rejects` computes them for a
frame a loader returned (a :class:`~workbench.schema.Rejects` of every part's
rejects, in partition order), and :func:`compute` computes frame and rejects in
one pass (each file parsed once; the partitions come to the client one at a
time, so it holds the result at most twice, as the pandas path does, where
``frame.compute()`` receives them in bulk: a client peak of 999 against
1,358 MiB for a 507 MiB frame of 64 files from two worker processes) and
returns a pandas frame with ``attrs["rejects"]`` (a
:class:`~workbench.schema.Rejects`) and ``attrs["parts"]`` (each part's other
attrs). ``strict=True`` raises on the first reject as in the
pandas path. A loader that still puts a DataFrame in ``attrs`` is accepted: its
rejects become a :class:`~workbench.schema.Rejects`, other tables a
:class:`~workbench.schema.SideTable`.

Where it runs (``client=``): None uses the current distributed Client if there
is one, else starts an in-process :class:`distributed.LocalCluster` once
(``processes=False``, one worker, at most 4 threads, status pages on
127.0.0.1 only; closed at exit): no data
is copied between processes, and the C strace scanner releases the GIL. For
process parallelism, start a cluster yourself and pass its address
(``"tcp://host:8786"``; its Client becomes the default, so ``frame.compute()``
runs there) or a Client (the first part lives on its cluster: ``frame.compute()``
must run there, so use ``with client.as_current():`` or ``client.compute``;
:func:`compute` and :func:`rejects` use the frame's own cluster by themselves).
Workers must be able to read the paths.
"""
from __future__ import annotations

import atexit
import os
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from .errors import InputNotFoundError, SchemaError, UsageError
from .schema import Rejects, SideTable, rejects_of

if TYPE_CHECKING:
    import dask.dataframe as dd
    from distributed import Client

ENGINES = ("pandas", "dask")
_PARTS_ATTR = "_workbench_parts"
_CLIENT_ATTR = "_workbench_client"
_local: list[Any] = []  # [LocalCluster, Client] once started
#: the local cluster's status pages listen on loopback only, on free ports
LOOPBACK_HTTP = {"dashboard_address": "127.0.0.1:0", "worker_dashboard_address": "127.0.0.1:0"}


def check_engine(engine: str, source: object) -> bool:
    """True for engine="dask" (after checking that ``source`` names files), False for "pandas"."""
    if engine not in ENGINES:
        raise UsageError(f"engine={engine!r}: expected one of {', '.join(map(repr, ENGINES))}")
    if engine == "dask":
        if hasattr(source, "read") or (isinstance(source, str) and ("\n" in source or "\r" in source)):
            raise UsageError('engine="dask" reads files: give a path, a glob or a list of paths, '
                             'not text or an open stream (use engine="pandas" for those)')
    return engine == "dask"


def get_client(client: Client | str | None = None) -> Client:
    """The distributed Client to use: given, connected to an address, current, or a local in-process one."""
    from distributed import Client, LocalCluster

    if isinstance(client, Client):
        return client
    if isinstance(client, str):
        address = client if "://" in client else "tcp://" + client
        try:
            current = Client.current()
            if current.scheduler.address == address:
                return current
        except ValueError:
            pass
        return Client(address, set_as_default=True)
    if client is not None:
        raise UsageError(f"client={client!r}: expected None, a scheduler address or a Client, "
                         f"not {type(client).__name__}")
    try:
        return Client.current()
    except ValueError:
        pass
    if _local and _local[1].status == "running":
        return _local[1]
    cluster = LocalCluster(processes=False, n_workers=1, threads_per_worker=min(4, os.cpu_count() or 1),
                           **LOOPBACK_HTTP)
    _local[:] = [cluster, Client(cluster, set_as_default=True)]
    return _local[1]


@atexit.register
def _close_local() -> None:
    for obj in reversed(_local):
        obj.close()
    _local.clear()


def _values(attrs: Mapping[Hashable | None, Any]) -> dict[Hashable | None, Any]:
    """``attrs`` with tables as values: a rejects DataFrame as :class:`Rejects`, other DataFrames as :class:`SideTable`."""
    out: dict[Hashable | None, Any] = {}
    for k, v in attrs.items():
        if isinstance(v, pd.DataFrame):
            v = Rejects(v) if k == "rejects" else SideTable(v)
        out[k] = v
    return out


def _checked(frame: pd.DataFrame, meta: pd.DataFrame, name: str) -> pd.DataFrame:
    """The part's frame, checked against the first part's columns and dtypes."""
    got = {c: str(t) if not isinstance(t, pd.CategoricalDtype) else "category" for c, t in frame.dtypes.items()}
    want = {c: str(t) if not isinstance(t, pd.CategoricalDtype) else "category" for c, t in meta.dtypes.items()}
    if got != want:
        diff = sorted(set(got.items()) ^ set(want.items()))
        raise SchemaError(f'{name}: engine="dask" needs every file to give the columns and dtypes of the first '
                          f"one; these differ: {diff}; read it separately or with engine=\"pandas\"")
    if any(isinstance(v, pd.DataFrame) for v in frame.attrs.values()):
        frame = frame.copy(deep=False)
        frame.attrs = _values(frame.attrs)
    return frame


def _rejects_of(frame: pd.DataFrame) -> Rejects:
    return rejects_of(frame)


def _other_attrs(frame: pd.DataFrame) -> dict[Hashable | None, Any]:
    return _values({k: v for k, v in frame.attrs.items() if k != "rejects"})


def _empty_meta(frame: pd.DataFrame) -> pd.DataFrame:
    from dask.dataframe.utils import clear_known_categories

    meta = frame.iloc[:0].copy()
    meta.attrs = {}  # the meta describes columns; the first part's rejects are not the frame's
    # categories learned from one file would be wrong for the others: mark them unknown
    varying = [c for c, t in meta.dtypes.items() if isinstance(t, pd.CategoricalDtype)]
    return clear_known_categories(meta, cols=varying) if varying else meta


def _meta_of(frame: pd.DataFrame, known_categories: tuple[str, ...]) -> pd.DataFrame:
    """The empty frame describing ``frame``'s columns and dtypes (categories kept for ``known_categories``)."""
    meta = _empty_meta(frame)
    for c in known_categories:
        meta[c] = meta[c].astype(frame[c].dtype)
    return meta


def dask_frame(
    parts: Sequence[Any],
    load: Callable[[Any], pd.DataFrame],
    *,
    names: Sequence[str] | None = None,
    client: Client | str | None = None,
    known_categories: Sequence[str] = (),
) -> dd.DataFrame:
    """A dask DataFrame with one lazy partition per part, ``load(part)`` giving each (validated) frame.

    Columns and dtypes: those of ``load``'s frames (the loader's schema).
    ``names`` label the parts in errors (default ``str(part)``);
    ``known_categories``: categorical columns whose categories are fixed by the
    schema (kept known in the meta). Rejects: :func:`rejects` / :func:`compute`.
    """
    import dask
    import dask.dataframe as dd
    from dask import delayed

    if not parts:
        raise InputNotFoundError('engine="dask": no files to read (the paths or globs named none)')
    names = [str(p) for p in parts] if names is None else list(names)
    cl = get_client(client)
    loaded: list[Any] = [delayed(load, pure=False)(p) for p in parts]
    # the first part is parsed once, on the cluster, and stays there as partition 0's data; only its
    # empty meta comes back to learn the columns (no second parse, no copy of the part in the client)
    loaded[0] = cl.compute(loaded[0])
    meta = cl.submit(_meta_of, loaded[0], tuple(known_categories), pure=False).result()
    pieces = [delayed(_checked, pure=True)(x, meta, n) for x, n in zip(loaded, names, strict=True)]
    # keep the loaders' exact dtypes (object and pandas "str" columns), no conversion to pyarrow strings
    with dask.config.set({"dataframe.convert-string": False}):
        frame = dd.from_delayed(pieces, meta=meta, verify_meta=False)
    object.__setattr__(frame, _PARTS_ATTR, loaded)
    object.__setattr__(frame, _CLIENT_ATTR, cl)
    return frame


def _parts_of(frame: dd.DataFrame) -> list[Any]:
    parts = getattr(frame, _PARTS_ATTR, None)
    if parts is None:
        raise UsageError('engine.rejects()/engine.compute(): rejects are kept for the frame a loader returned '
                         'with engine="dask" (not for frames derived from it); call them on that frame')
    return list(parts)


def _client_of(frame: dd.DataFrame) -> Client:
    """The Client the loader's frame was made with (its first part lives on that cluster)."""
    return getattr(frame, _CLIENT_ATTR, None) or get_client()


def rejects(frame: dd.DataFrame) -> Rejects:
    """Every rejected line of every part, in partition order; parses the files again (not the first).

    Returns a :class:`~workbench.schema.Rejects` (``len()``, ``.frame()`` with
    source, line, text, reason; ``.by_reason()``), like ``attrs["rejects"]`` of
    the pandas path. :func:`compute` gets frame and rejects in one pass.
    """
    from dask import delayed

    parts = _parts_of(frame)
    cl = _client_of(frame)
    return Rejects.concat(cl.gather(cl.compute([delayed(_rejects_of)(p) for p in parts])))


def compute(frame: dd.DataFrame) -> pd.DataFrame:
    """Compute a loader's dask frame and its rejects in one pass (each file parsed once).

    Returns the pandas frame with ``attrs["rejects"]`` (a
    :class:`~workbench.schema.Rejects` of every part's rejects, in partition
    order) and ``attrs["parts"]`` (each part's other attrs, in partition order).
    Runs on the cluster the frame was made with; the partitions come to the
    client one at a time, in order, while the workers go on parsing, so the
    client holds the parts and their concatenation, as the pandas path does
    (``frame.compute()`` receives them all in one message and needs a third
    copy while decoding it).
    """
    from dask import delayed

    parts = _parts_of(frame)
    cl = _client_of(frame)
    pieces = frame.to_delayed()
    n = len(pieces)
    futures = cl.compute([*pieces, *[delayed(_rejects_of)(p) for p in parts],
                          *[delayed(_other_attrs)(p) for p in parts]])
    frames = []
    for fut in futures[:n]:
        frames.append(fut.result())
        fut.release()
    tables, attrs = cl.gather(futures[n:2 * n]), cl.gather(futures[2 * n:])
    finish, extra = frame.__dask_postcompute__()
    out = finish(frames, *extra)
    del frames
    out.attrs = {"rejects": Rejects.concat(tables), "parts": attrs}
    return out
