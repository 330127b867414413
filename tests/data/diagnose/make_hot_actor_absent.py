"""An actor system where no actor kind dominates, generated from a stated model with a fixed seed.

Run from the repository root::

    .venv/bin/python tests/data/diagnose/make_hot_actor_absent.py

Model: the grid of ``hot_actor/present`` (iteration 1, banks 1–3, 2 or 4 clients per bank,
2 repeats); in each run one coordinator, ``banks`` banks and ``banks × clients_per_bank``
clients share the work evenly: every actor's busy time is transfers × 20 µs ×
lognormal(0, 0.35), whatever its kind (one stage of a balanced pipeline each). Messages
and work are derived the same way (work ∝ busy time). Seed 23. Columns as ``workbench lab
actors`` writes them (read by :func:`workbench.lab.actors.read_actor_metrics`).
"""
from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "hot_actor" / "absent" / "actors.csv"
COLUMNS = ["iteration", "banks", "clients_per_bank", "repeat", "transfers", "actor", "kind", "received", "sent",
           "peak_mailbox", "busy_s", "peers", "scanned", "work"]


def main() -> int:
    rng = np.random.default_rng(23)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(OUT, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for banks in (1, 2, 3):
            for cpb in (2, 4):
                clients = banks * cpb
                transfers = clients * (clients - 1)
                actors = [("coordinator", "coordinator")] + [(f"bank-{i}", "bank") for i in range(1, banks + 1)] \
                    + [(f"client-{i}", "client") for i in range(1, clients + 1)]
                for repeat in (1, 2):
                    for actor, kind in actors:
                        busy_s = transfers * 20e-6 * float(rng.lognormal(0.0, 0.35))
                        msgs = max(1, round(busy_s / 5e-6))
                        w.writerow([1, banks, cpb, repeat, transfers, actor, kind, msgs, msgs, 1, f"{busy_s:.7f}",
                                    len(actors) - 1, 0, 2 * msgs])
                        n += 1
    print(f"{OUT}: {n} actor rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
