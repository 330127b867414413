"""Per-node attributes (migration state, role, kernel) from a CSV with a ``host`` column."""
from __future__ import annotations

import pandas as pd

from ..errors import ParseError
from ..paths import resolve
from ..schema import Column, Schema, attach_rejects, validate

NODES_SCHEMA = Schema(
    name="node_attributes",
    doc="One row per host; every other column is a node attribute kept as text.",
    columns=(Column("host", "string", doc="host name as in the snapshots"),),
)


def read_node_attributes(path: str) -> pd.DataFrame:
    """Read ``host,<attribute>,...`` CSV; returns :data:`NODES_SCHEMA` (attributes as strings).

    Raises ParseError when the ``host`` column is missing or a host is listed twice.
    """
    p = resolve(path)
    df = pd.read_csv(p, dtype=str, keep_default_na=False)
    if "host" not in df.columns:
        raise ParseError(str(p), 1, ",".join(df.columns), "node attribute CSV needs a 'host' column")
    dup = df[df["host"].duplicated()]
    if len(dup):
        raise ParseError(str(p), int(dup.index[0]) + 2, ",".join(dup.iloc[0]), "host listed twice")
    df = df.astype(object)
    attach_rejects(df, [])
    return validate(df, NODES_SCHEMA)
