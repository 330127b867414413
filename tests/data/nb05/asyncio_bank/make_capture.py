"""A two-phase-commit bank on asyncio actors, timed over a grid and against worker processes.

Not the workbench's own simulation: an independent benchmark written for this
capture, so notebook 05 is tested on data it was not built on. Two designs:

1. ``central`` — one coordinator drives every transfer: it finds both accounts'
   banks by scanning a registry list, keeps every transfer in flight in a list it
   scans on each reply, asks the payer's bank to prepare, then commits both sides;
2. ``transaction`` — each transfer is a Transaction actor that asks the
   coordinator (a dict lookup) where the accounts are and runs its own
   prepare/commit with the banks.

Every actor is an asyncio task with one ``asyncio.Queue`` mailbox; a handler
never awaits, so ``busy_s`` (time inside handlers) is the actor's own work.
Each client starts with ``clients`` units and pays 1 unit to every other
client, so no prepare fails. Loopback-free: no sockets, no files except the
CSVs written at the end. Bounded: the grid is fixed and small.

Writes, into the folder given as the first argument:
``iteration_times.csv`` (median wall time over the repeats per grid cell),
``cores_times.csv`` (a fixed demand split over 1..6 worker processes, median of the repeats),
``runs.csv`` and ``actors.csv.gz`` (the workbench lab schemas).
"""
from __future__ import annotations

import asyncio
import csv
import gzip
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

BANKS = (1, 2, 3, 4)
CLIENTS_PER_BANK = (3, 5, 8)
REPEATS = 5
CORES_DEMAND = (4, 8)  # banks, clients per bank of the fixed demand
WORKERS = (1, 2, 3, 4, 5, 6)


class Actor:
    kind = "actor"

    def __init__(self, system: System, name: str) -> None:
        self.system, self.name = system, name
        self.box: asyncio.Queue = asyncio.Queue()
        self.received = self.sent = self.peak = self.scanned = 0
        self.busy_s = 0.0
        self.peers: set[str] = set()
        system.actors.append(self)
        system.tasks.append(asyncio.get_running_loop().create_task(self.loop()))

    def send(self, to: Actor, *msg: object) -> None:
        self.sent += 1
        self.peers.add(to.name)
        to.box.put_nowait((self, *msg))
        to.peak = max(to.peak, to.box.qsize())

    async def loop(self) -> None:
        while True:
            msg = await self.box.get()
            if msg[1] == "stop":
                return
            self.received += 1
            self.peers.add(msg[0].name)
            t0 = time.perf_counter()
            self.handle(msg[0], *msg[1:])
            self.busy_s += time.perf_counter() - t0

    def handle(self, frm: Actor, *msg: object) -> None:
        raise NotImplementedError


class System:
    def __init__(self, transfers: int) -> None:
        self.actors: list[Actor] = []
        self.tasks: list[asyncio.Task] = []
        self.left = transfers
        self.done = asyncio.get_running_loop().create_future()
        self.committed = 0

    def finished_one(self) -> None:
        self.committed += 1
        self.left -= 1
        if self.left == 0 and not self.done.done():
            self.done.set_result(None)


class Bank(Actor):
    kind = "bank"

    def __init__(self, system: System, name: str, indexed: bool) -> None:
        super().__init__(system, name)
        self.accounts: list[list] = []  # [client, balance, reserved]
        self.index: dict[str, list] = {}
        self.indexed = indexed

    def open(self, client: str, balance: int) -> None:
        acc = [client, balance, 0]
        self.accounts.append(acc)
        self.index[client] = acc

    def find(self, client: str) -> list:
        if self.indexed:
            self.scanned += 1
            return self.index[client]
        for i, acc in enumerate(self.accounts):
            if acc[0] == client:
                self.scanned += i + 1
                return acc
        raise KeyError(client)

    def handle(self, frm: Actor, *msg: object) -> None:
        op, tx, client = msg[0], msg[1], msg[2]
        acc = self.find(str(client))
        if op == "prepare":
            ok = acc[1] - acc[2] >= 1
            if ok:
                acc[2] += 1
            self.send(frm, "prepared", tx, ok)
        elif op == "debit":
            acc[1] -= 1
            acc[2] -= 1
            self.send(frm, "ack", tx)
        elif op == "credit":
            acc[1] += 1
            self.send(frm, "ack", tx)


class Client(Actor):
    kind = "client"

    def __init__(self, system: System, name: str) -> None:
        super().__init__(system, name)
        self.pending = 0

    def handle(self, frm: Actor, *msg: object) -> None:
        if msg[0] == "done":
            self.pending -= 1
            self.system.finished_one()


class CentralCoordinator(Actor):
    """Design 1: drives every transfer, keeps them in flight in a list."""

    kind = "coordinator"

    def __init__(self, system: System, name: str) -> None:
        super().__init__(system, name)
        self.registry: list[tuple[str, Bank]] = []
        self.inflight: list[list] = []  # [tx, client, payer_bank, payee_bank, payer, payee, acks]

    def bank_of(self, client: str) -> Bank:
        for i, (c, b) in enumerate(self.registry):
            if c == client:
                self.scanned += i + 1
                return b
        raise KeyError(client)

    def entry(self, tx: object) -> list:
        for i, e in enumerate(self.inflight):
            if e[0] == tx:
                self.scanned += i + 1
                return e
        raise KeyError(tx)

    def handle(self, frm: Actor, *msg: object) -> None:
        op = msg[0]
        if op == "transfer":
            tx, payer, payee = msg[1], str(msg[2]), str(msg[3])
            pb, qb = self.bank_of(payer), self.bank_of(payee)
            self.inflight.append([tx, frm, pb, qb, payer, payee, 0])
            self.send(pb, "prepare", tx, payer)
        elif op == "prepared":
            e = self.entry(msg[1])
            if not msg[2]:
                raise RuntimeError("prepare failed although every client starts with enough money")
            self.send(e[2], "debit", e[0], e[4])
            self.send(e[3], "credit", e[0], e[5])
        elif op == "ack":
            e = self.entry(msg[1])
            e[6] += 1
            if e[6] == 2:
                self.inflight.remove(e)
                self.send(e[1], "done", e[0])


class Directory(Actor):
    """Design 2: the coordinator only says where a client's account is."""

    kind = "coordinator"

    def __init__(self, system: System, name: str) -> None:
        super().__init__(system, name)
        self.where: dict[str, Bank] = {}

    def handle(self, frm: Actor, *msg: object) -> None:
        tx, payer, payee = msg[1], str(msg[2]), str(msg[3])
        self.scanned += 2
        self.send(frm, "banks", tx, self.where[payer], self.where[payee])


class Transaction(Actor):
    kind = "transaction"

    def __init__(self, system: System, name: str, client: Client, payer: str, payee: str) -> None:
        super().__init__(system, name)
        self.client, self.payer, self.payee, self.acks = client, payer, payee, 0
        self.pb: Bank | None = None
        self.qb: Bank | None = None

    def handle(self, frm: Actor, *msg: object) -> None:
        op = msg[0]
        if op == "start":
            self.send(self.system.directory, "where", self.name, self.payer, self.payee)  # type: ignore[attr-defined]
        elif op == "banks":
            self.pb, self.qb = msg[2], msg[3]  # type: ignore[assignment]
            self.send(self.pb, "prepare", self.name, self.payer)  # type: ignore[arg-type]
        elif op == "prepared":
            if not msg[2]:
                raise RuntimeError("prepare failed although every client starts with enough money")
            self.send(self.pb, "debit", self.name, self.payer)  # type: ignore[arg-type]
            self.send(self.qb, "credit", self.name, self.payee)  # type: ignore[arg-type]
        elif op == "ack":
            self.acks += 1
            if self.acks == 2:
                self.send(self.client, "done", self.name)
                self.box.put_nowait((self, "stop"))


async def run_once(design: int, banks: int, per_bank: int, payers: range | None = None) -> tuple[float, System]:
    """One run: every client (or those in ``payers``) pays 1 unit to every other client."""
    n = banks * per_bank
    payer_ids = range(n) if payers is None else payers
    transfers = len(payer_ids) * (n - 1)
    sys_ = System(transfers)
    coord: Actor = CentralCoordinator(sys_, "coordinator") if design == 1 else Directory(sys_, "coordinator")
    sys_.directory = coord  # type: ignore[attr-defined]
    bank_actors = [Bank(sys_, f"bank{b}", indexed=design == 2) for b in range(banks)]
    clients = []
    for i in range(n):
        c = Client(sys_, f"client{i}")
        bank_actors[i % banks].open(c.name, n)
        if design == 1:
            coord.registry.append((c.name, bank_actors[i % banks]))  # type: ignore[attr-defined]
        else:
            coord.where[c.name] = bank_actors[i % banks]  # type: ignore[attr-defined]
        clients.append(c)
    await asyncio.sleep(0)
    t0 = time.perf_counter()
    for i in payer_ids:
        for j in range(n):
            if i == j:
                continue
            tx = f"t{i}_{j}"
            clients[i].pending += 1
            if design == 1:
                clients[i].send(coord, "transfer", tx, clients[i].name, clients[j].name)
            else:
                t = Transaction(sys_, tx, clients[i], clients[i].name, clients[j].name)
                clients[i].send(t, "start")
    if transfers:
        await asyncio.wait_for(sys_.done, timeout=120)
    wall = time.perf_counter() - t0
    for a in sys_.actors:
        if a.kind != "transaction":
            a.box.put_nowait((a, "stop"))
    await asyncio.gather(*sys_.tasks)
    total = sum(acc[1] for b in bank_actors for acc in b.accounts)
    if total != n * n or any(acc[1] < 0 or acc[2] for b in bank_actors for acc in b.accounts):
        raise RuntimeError(f"money not conserved: {total} != {n * n}")
    return wall, sys_


def shard(args: tuple[int, int, int, int, int]) -> int:
    design, banks, per_bank, lo, hi = args
    _, s = asyncio.run(run_once(design, banks, per_bank, range(lo, hi)))
    return s.committed


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    runs, actors, cells = [], [], []
    for design in (1, 2):
        for b in BANKS:
            for c in CLIENTS_PER_BANK:
                walls = []
                for r in range(1, REPEATS + 1):
                    wall, s = asyncio.run(run_once(design, b, c))
                    walls.append(wall)
                    n = b * c
                    runs.append({"iteration": design, "banks": b, "clients_per_bank": c, "repeat": r, "clients": n,
                                 "transfers": n * (n - 1), "wall_s": f"{wall:.6f}",
                                 "messages": sum(a.received for a in s.actors), "actors": len(s.actors),
                                 "committed": s.committed, "abandoned": 0, "lost": n * (n - 1) - s.committed,
                                 "retries": 0, "money_expected": n * n, "money_final": n * n,
                                 "money_conserved": True, "ledger_consistent": True, "status": "ok"})
                    for a in s.actors:
                        actors.append({"iteration": design, "banks": b, "clients_per_bank": c, "repeat": r,
                                       "transfers": n * (n - 1), "actor": a.name, "kind": a.kind,
                                       "received": a.received, "sent": a.sent, "peak_mailbox": a.peak,
                                       "busy_s": f"{a.busy_s:.7f}", "peers": len(a.peers), "scanned": a.scanned,
                                       "work": a.received + a.sent + a.scanned})
                cells.append({"iteration": design, "banks": b, "clients_per_bank": c,
                              "time_s": f"{statistics.median(walls):.4f}"})
                print(f"design {design} {b}x{c}: {statistics.median(walls):.4f} s", flush=True)
    cores = []
    fb, fc = CORES_DEMAND
    n = fb * fc
    for design in (1, 2):
        for w in WORKERS:
            walls = []
            for _ in range(REPEATS):
                bounds = [round(k * n / w) for k in range(w + 1)]
                parts = [(design, fb, fc, bounds[k], bounds[k + 1]) for k in range(w)]
                t0 = time.perf_counter()
                with ProcessPoolExecutor(max_workers=w) as pool:
                    done = sum(pool.map(shard, parts))
                walls.append(time.perf_counter() - t0)
                if done != n * (n - 1):
                    raise RuntimeError(f"{done} of {n * (n - 1)} transfers committed")
            cores.append({"iteration": design, "cores": w, "time_s": f"{statistics.median(walls):.4f}"})
            print(f"design {design} workers {w}: {statistics.median(walls):.4f} s", flush=True)
    for name, rows in (("iteration_times.csv", cells), ("cores_times.csv", cores), ("runs.csv", runs),
                       ("actors.csv.gz", actors)):
        opener = gzip.open if name.endswith(".gz") else open
        with opener(out / name, "wt", newline="") as fh:
            w_ = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w_.writeheader()
            w_.writerows(rows)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "."))
