"""Captures for low_rate_tail, from the nagle lab on loopback.

Run from the repository root::

    .venv/bin/python tests/data/diagnose/make_nagle.py present
    .venv/bin/python tests/data/diagnose/make_nagle.py absent

present: Nagle's algorithm on both sides (the lab's default sockets), each side
writing a message as two send() calls, open loop at 10, 100 and 1000 requests/s
over 2 connections: at a low rate every second write waits for the peer's delayed
ACK; at a high rate the ACKs ride on the traffic.
absent: the same sweep with TCP_NODELAY on both sides (the lab's ``nodelay_both``).
"""
from __future__ import annotations

import sys
from pathlib import Path

from workbench.lab.nagle import NODELAY_CONDITIONS, _Recorder, sweep, write_csv

HERE = Path(__file__).resolve().parent / "low_rate_tail"
RATES = (10.0, 100.0, 1000.0)


def main(which: str) -> int:
    cond = {"present": NODELAY_CONDITIONS[0], "absent": NODELAY_CONDITIONS[3]}[which]
    rec = _Recorder("127.0.0.1")
    sweep(cond, RATES, rec, phase="sweep" if which == "present" else "nodelay", duration_s=2.0,
          min_requests=150, max_requests=600, connections=2, body_bytes=32, progress=False)
    out = HERE / which / "samples.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    write_csv(rec.frame(), str(out))
    print(f"{out}: {len(rec.frame())} requests")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
