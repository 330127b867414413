"""Per-node attributes (migration state, role, kernel) from a CSV with a ``host`` column."""
from __future__ import annotations

import csv
import io

import pandas as pd

from ..errors import ParseError
from ..schema import Column, Schema, attach_rejects, validate
from ..sources import Collector, Source, open_inputs

NODES_SCHEMA = Schema(
    name="node_attributes",
    doc="One row per host; every other column is a node attribute kept as text.",
    columns=(Column("host", "string", doc="host name as in the snapshots"),),
)


def read_node_attributes(source: Source) -> pd.DataFrame:
    """Read ``host,<attribute>,...`` CSV; returns :data:`NODES_SCHEMA` (attributes as strings).

    ``source`` is a path, a stream or the text itself. Blank lines are skipped.
    Raises ParseError (file, line) when the ``host`` column is missing, a record
    has the wrong number of fields or a host is listed twice. A file's last line
    without its line end is rejected ("incomplete last line", ``attrs['rejects']``).
    """
    frames = []
    first_seen: dict[str, str] = {}
    col = Collector("")
    for inp in open_inputs(source, "node attribute CSV", directories=True):
        col.source = inp.name
        inp = inp.complete(col)
        reader = csv.reader(io.StringIO(inp.text))
        header: list[str] | None = None
        rows: list[list[str]] = []
        try:
            for rec in reader:
                n = reader.line_num
                if not rec or all(not c.strip() for c in rec):
                    continue
                if header is None:
                    header = [c.strip() for c in rec]
                    if "host" not in header:
                        raise ParseError(inp.name, n, inp.line(n), "node attribute CSV needs a 'host' column; "
                                         f"got columns {header}")
                    continue
                if len(rec) != len(header):
                    raise ParseError(inp.name, n, inp.line(n), f"expected {len(header)} fields ({', '.join(header)}), "
                                     f"got {len(rec)}")
                host = rec[header.index("host")]
                if host in first_seen:
                    raise ParseError(inp.name, n, inp.line(n), f"host listed twice (first at {first_seen[host]})")
                first_seen[host] = f"{inp.name}:{n}"
                rows.append(rec)
        except csv.Error as exc:
            raise ParseError(inp.name, reader.line_num, inp.line(reader.line_num),
                             f"not a readable CSV: {exc}") from None
        if header is None:
            raise ParseError(inp.name, None, "", "empty file; expected a CSV header with a 'host' column")
        frames.append(pd.DataFrame(rows, columns=header, dtype=object))
    df = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    df = df.astype(object).fillna("")
    attach_rejects(df, col.rows)
    return validate(df, NODES_SCHEMA)
