"""An actor simulation of the two-phase-commit bank, with per-actor metrics.

A coordinator, banks that register with it and clients that open an account of
10 units at their bank; every client transfers 1 unit to every other client.
Three designs, after the Erlang study this workbench re-examines:

1. **naive** — the coordinator drives every transaction: it asks every bank who
   holds the beneficiary, asks the payer's bank to prepare, commits both sides
   and rolls back on failure, keeping every transaction in flight in lists it
   scans on each message (as the original coordinator process did);
2. **transaction** — each transfer is a Transaction actor that drives its own
   two-phase commit and retries itself; the coordinator only forwards "who holds
   this client?" to the banks;
3. **account** — each client's balance is an Account actor; banks only find
   accounts.

Each actor owns one mailbox (a FIFO queue) and handles one message at a time.
Actors run on a cooperative scheduler in one OS thread — round-robin over the
actors with mail, up to ``batch`` messages per turn — like an Erlang VM with one
scheduler. State is kept the way the Erlang processes kept it: banks hold their
accounts in lists looked up by linear scan; the count of entries examined is
recorded as ``scanned``.

Recorded per actor: messages received and sent, peak mailbox length, busy time
(time spent handling messages), distinct peers, entries scanned, and
``work = received + sent + scanned``. Recorded per run: wall time, messages,
transfers committed / abandoned (retry cap) / lost, retries, and the invariants
— money conserved (the balances sum to 10 × clients, none negative) and the
ledger consistent (each balance = 10 + transfers in − transfers out).

Bounded: at most :data:`MAX_CLIENTS` clients per run and :data:`MAX_RUNS` runs
per grid, a message cap per run and a wall-time limit for the whole grid; it
touches no network and no files except the two CSVs it is asked to write.

Run it as ``workbench lab actors --out DIR`` (writes ``DIR/runs.csv`` and
``DIR/actors.csv``, or ``actors.csv.gz`` with ``--gzip``); read them back with :func:`read_runs` and
:func:`read_actor_metrics`.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import LabError, SchemaError, UsageError
from ..schema import Column, Schema, validate
from ..sources import Source
from ..tables import AtLeast, NonEmpty, Rule, read_table

ITERATIONS: dict[int, str] = {1: "naive", 2: "transaction", 3: "account"}
KINDS = ("coordinator", "bank", "client", "transaction", "account")
INITIAL_BALANCE = 10
MAX_CLIENTS = 64
MAX_RUNS = 300
DEFAULT_MAX_MESSAGES = 3_000_000
DEFAULT_MAX_RETRIES = 100_000

RUNS_SCHEMA = Schema(
    name="actor_runs",
    doc="One row per simulated run of the two-phase-commit bank.",
    columns=(
        Column("iteration", "int", doc="design: 1 naive, 2 transaction actor, 3 account actor"),
        Column("banks", "int", doc="bank actors"),
        Column("clients_per_bank", "int", doc="client actors per bank"),
        Column("repeat", "int", doc="repeat number of this grid cell, from 1"),
        Column("clients", "int", doc="banks × clients_per_bank"),
        Column("transfers", "int", doc="clients × (clients − 1) transfers requested"),
        Column("wall_s", "float", "s", "wall time from the first transfer request to quiescence"),
        Column("messages", "int", doc="messages delivered (all actors)"),
        Column("actors", "int", doc="actors spawned"),
        Column("committed", "int", doc="transfers committed"),
        Column("abandoned", "int", doc="transfers given up after the retry cap"),
        Column("lost", "int", doc="transfers neither committed nor abandoned at the end, or still awaited by "
                                  "their client"),
        Column("retries", "int", doc="re-attempts after a failed prepare or commit"),
        Column("money_expected", "int", doc="10 × clients"),
        Column("money_final", "int", doc="sum of the final balances"),
        Column("money_conserved", "bool", doc="money_final == money_expected and no balance negative"),
        Column("ledger_consistent", "bool", doc="every balance = 10 + committed in − committed out"),
        Column("status", "string", doc="ok, or why the run was stopped (message cap, time limit)"),
    ),
    extra_columns_allowed=False,
)

ACTOR_METRICS_SCHEMA = Schema(
    name="actor_metrics",
    doc="One row per actor per simulated run.",
    columns=(
        Column("iteration", "int", doc="design iteration"),
        Column("banks", "int", doc="bank actors in the run"),
        Column("clients_per_bank", "int", doc="client actors per bank in the run"),
        Column("repeat", "int", doc="repeat number"),
        Column("transfers", "int", doc="transfers requested in the run"),
        Column("actor", "string", doc="actor name, unique within the run"),
        Column("kind", "string", doc="coordinator, bank, client, transaction or account"),
        Column("received", "int", doc="messages handled"),
        Column("sent", "int", doc="messages sent"),
        Column("peak_mailbox", "int", doc="largest mailbox length seen"),
        Column("busy_s", "float", "s", "time spent handling messages"),
        Column("peers", "int", doc="distinct actors it sent to or received from"),
        Column("scanned", "int", doc="state entries examined (list scans)"),
        Column("work", "int", doc="received + sent + scanned"),
    ),
    extra_columns_allowed=False,
)


class SimulationLimit(LabError):
    """A run hit its message cap or time limit (caught by :func:`simulate`, which records it as the status)."""


# --------------------------------------------------------------------------- runtime

class Actor:
    """An actor: a name, one mailbox and metrics; subclasses implement :meth:`handle`."""

    kind = "actor"

    def __init__(self, system: ActorSystem, name: str) -> None:
        self.system = system
        self.name = name
        self.mailbox: deque[tuple[Any, ...]] = deque()
        self.scheduled = False
        self.received = 0
        self.sent = 0
        self.peak_mailbox = 0
        self.busy_s = 0.0
        self.scanned = 0
        self.peers: set[str] = set()
        system.actors.append(self)

    def send(self, to: Actor, *msg: Any) -> None:
        self.system.deliver(self, to, msg)

    def handle(self, msg: tuple[Any, ...]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def metrics(self) -> dict[str, Any]:
        return {"actor": self.name, "kind": self.kind, "received": self.received, "sent": self.sent,
                "peak_mailbox": self.peak_mailbox, "busy_s": self.busy_s, "peers": len(self.peers),
                "scanned": self.scanned, "work": self.received + self.sent + self.scanned}


class ActorSystem:
    """Mailboxes and a round-robin scheduler over the actors that have mail."""

    def __init__(self, max_messages: int = DEFAULT_MAX_MESSAGES, deadline: float = float("inf"),
                 batch: int = 1) -> None:
        self.actors: list[Actor] = []
        self.ready: deque[Actor] = deque()
        self.messages = 0
        self.max_messages = max_messages
        self.deadline = deadline
        self.batch = max(1, batch)

    def deliver(self, sender: Actor | None, to: Actor, msg: tuple[Any, ...]) -> None:
        to.mailbox.append(msg)
        if len(to.mailbox) > to.peak_mailbox:
            to.peak_mailbox = len(to.mailbox)
        if sender is not None:
            sender.sent += 1
            sender.peers.add(to.name)
            to.peers.add(sender.name)
        self.messages += 1
        if self.messages > self.max_messages:
            raise SimulationLimit(f"message cap {self.max_messages} reached")
        if not to.scheduled:
            to.scheduled = True
            self.ready.append(to)

    def run(self) -> None:
        """Handle messages until no actor has mail (quiescence) or a limit is hit."""
        perf = time.perf_counter
        ready = self.ready
        turns = 0
        while ready:
            a = ready.popleft()
            a.scheduled = False
            box = a.mailbox
            for _ in range(min(self.batch, len(box))):
                msg = box.popleft()
                a.received += 1
                t0 = perf()
                a.handle(msg)
                a.busy_s += perf() - t0
            if box and not a.scheduled:
                a.scheduled = True
                ready.append(a)
            turns += 1
            if not turns & 1023 and perf() > self.deadline:
                raise SimulationLimit("time limit reached")


@dataclass
class _Ledger:
    """What the clients were told: committed (payer, payee) pairs and abandoned transfers."""

    committed: list[tuple[str, str]] = field(default_factory=list)
    abandoned: int = 0
    retries: int = 0


def _index(actor: Actor, names: list[Any], key: Any) -> int:
    """Linear search as the Erlang lists did; counts the entries examined. -1 when absent."""
    try:
        i = names.index(key)
    except ValueError:
        actor.scanned += len(names)
        return -1
    actor.scanned += i + 1
    return i


# --------------------------------------------------------------------------- iteration 1

class Coordinator1(Actor):
    """Drives every transaction; keeps searching / preparing / committing lists."""

    kind = "coordinator"

    def __init__(self, system: ActorSystem, name: str) -> None:
        super().__init__(system, name)
        self.hosts: list[Actor] = []
        self.searching: list[tuple[Actor, Actor, Actor]] = []  # (payer, payer bank, payee)
        self.preparing: list[tuple[Actor, Actor, Actor, Actor]] = []  # + payee bank
        self.committing: list[tuple[Actor, Actor, Actor, Actor]] = []

    def handle(self, msg: tuple[Any, ...]) -> None:
        tag = msg[0]
        if tag == "host_add":
            self.hosts.append(msg[1])
        elif tag == "transfer":
            _, fc, fb, tc = msg
            for h in self.hosts:
                self.send(h, "has", tc)
            self.searching.append((fc, fb, tc))
        elif tag == "found":
            _, tc, tb = msg
            self.scanned += 2 * len(self.searching)
            found = [s for s in self.searching if s[2] is tc]
            self.searching = [s for s in self.searching if s[2] is not tc]
            for fc, fb, _tc in found:
                self.send(fb, "prepare", fc, tc)
                self.preparing.append((fc, fb, tc, tb))
        elif tag == "prepared":
            _, ok, fc, tc = msg
            self.scanned += 2 * len(self.preparing)
            hits = [p for p in self.preparing if p[0] is fc and p[2] is tc]
            self.preparing = [p for p in self.preparing if not (p[0] is fc and p[2] is tc)]
            for p in hits:
                if ok:
                    self.send(p[1], "commit", fc, "minus", tc)
                    self.send(p[3], "commit", tc, "plus", fc)
                    self.committing.append(p)
                else:
                    self.send(fc, "transfer_error", tc)
        elif tag == "committed":
            _, ok, fc, tc = msg
            self.scanned += 2 * len(self.committing)
            hits = [p for p in self.committing if p[0] is fc and p[2] is tc]
            self.committing = [p for p in self.committing if not (p[0] is fc and p[2] is tc)]
            for p in hits:
                if not ok:
                    self.send(p[3], "rollback", tc)
            self.send(fc, "transfer_ok" if ok else "transfer_error", tc)


class Bank1(Actor):
    """Holds its clients' balances; answers the coordinator."""

    kind = "bank"

    def __init__(self, system: ActorSystem, name: str, coordinator: Actor) -> None:
        super().__init__(system, name)
        self.coordinator = coordinator
        self.clients: list[Actor] = []
        self.cash: list[int] = []

    def handle(self, msg: tuple[Any, ...]) -> None:
        tag = msg[0]
        if tag == "client_add":
            if _index(self, self.clients, msg[1]) < 0:
                self.clients.append(msg[1])
                self.cash.append(INITIAL_BALANCE)
        elif tag == "transfer":
            _, fc, tc = msg
            if _index(self, self.clients, fc) >= 0:
                self.send(self.coordinator, "transfer", fc, self, tc)
        elif tag == "has":
            if _index(self, self.clients, msg[1]) >= 0:
                self.send(self.coordinator, "found", msg[1], self)
        elif tag == "prepare":
            _, fc, tc = msg
            i = _index(self, self.clients, fc)
            self.send(self.coordinator, "prepared", i >= 0 and self.cash[i] > 0, fc, tc)
        elif tag == "commit":
            _, c, op, other = msg
            i = _index(self, self.clients, c)
            if op == "minus":
                ok = i >= 0 and self.cash[i] > 0
                if ok:
                    self.cash[i] -= 1
                self.send(self.coordinator, "committed", ok, c, other)
            elif i >= 0:
                self.cash[i] += 1
        elif tag == "rollback":
            i = _index(self, self.clients, msg[1])
            if i >= 0:
                self.cash[i] -= 1

    def balances(self) -> dict[str, int]:
        return {c.name: v for c, v in zip(self.clients, self.cash, strict=True)}


class Client1(Actor):
    """Asks its bank for transfers; resubmits a failed one (up to the retry cap)."""

    kind = "client"

    def __init__(self, system: ActorSystem, name: str, bank: Actor, ledger: _Ledger, max_retries: int) -> None:
        super().__init__(system, name)
        self.bank = bank
        self.ledger = ledger
        self.max_retries = max_retries
        self.current: list[Actor] = []
        self.tries: dict[str, int] = {}

    def handle(self, msg: tuple[Any, ...]) -> None:
        tag, to = msg
        if tag == "transfer_new":
            self.current.append(to)
            self.send(self.bank, "transfer", self, to)
        elif tag == "transfer_ok":
            i = _index(self, self.current, to)
            if i >= 0:
                del self.current[i]
                self.ledger.committed.append((self.name, to.name))
        elif tag == "transfer_error":
            i = _index(self, self.current, to)
            if i < 0:
                return
            n = self.tries.get(to.name, 0) + 1
            self.tries[to.name] = n
            if n > self.max_retries:
                del self.current[i]
                self.ledger.abandoned += 1
            else:
                self.ledger.retries += 1
                self.send(self.bank, "transfer", self, to)


# --------------------------------------------------------------------------- iteration 2

class Coordinator2(Actor):
    """Only finds the payee's bank: forwards the question to every bank."""

    kind = "coordinator"

    def __init__(self, system: ActorSystem, name: str) -> None:
        super().__init__(system, name)
        self.hosts: list[Actor] = []

    def handle(self, msg: tuple[Any, ...]) -> None:
        if msg[0] == "host_add":
            self.hosts.append(msg[1])
        elif msg[0] == "find":
            _, tc, tx = msg
            for h in self.hosts:
                self.send(h, "has", tc, tx)


class Bank2(Bank1):
    """Holds balances; answers Transaction actors."""

    def handle(self, msg: tuple[Any, ...]) -> None:
        tag = msg[0]
        if tag == "client_add":
            if _index(self, self.clients, msg[1]) < 0:
                self.clients.append(msg[1])
                self.cash.append(INITIAL_BALANCE)
        elif tag == "transfer":
            _, fc, tc, tx = msg
            if _index(self, self.clients, fc) >= 0:
                self.send(self.coordinator, "find", tc, tx)
        elif tag == "has":
            _, tc, tx = msg
            if _index(self, self.clients, tc) >= 0:
                self.send(tx, "found", self)
        elif tag == "prepare":
            _, fc, tx = msg
            i = _index(self, self.clients, fc)
            self.send(tx, "prepared" if i >= 0 and self.cash[i] > 0 else "error")
        elif tag == "commit":
            _, c, op, tx = msg
            i = _index(self, self.clients, c)
            if op == "minus":
                if i >= 0 and self.cash[i] > 0:
                    self.cash[i] -= 1
                    self.send(tx, "ok")
                else:
                    self.send(tx, "error")
            elif i >= 0:
                self.cash[i] += 1
        elif tag == "rollback":
            i = _index(self, self.clients, msg[1])
            if i >= 0:
                self.cash[i] -= 1


class Transaction2(Actor):
    """One transfer's two-phase commit; retries itself after a failed prepare or commit."""

    kind = "transaction"

    def __init__(self, system: ActorSystem, name: str, client: Actor, payee: Actor, bank: Actor,
                 ledger: _Ledger, max_retries: int) -> None:
        super().__init__(system, name)
        self.client, self.payee, self.bank = client, payee, bank
        self.ledger, self.max_retries = ledger, max_retries
        self.prepared = False
        self.payee_bank: Actor | None = None
        self.tries = 0

    def handle(self, msg: tuple[Any, ...]) -> None:
        tag = msg[0]
        if tag == "error":
            if self.payee_bank is not None and self.prepared:
                self.send(self.payee_bank, "rollback", self.payee)
            self.prepared = False
            self.tries += 1
            if self.tries > self.max_retries:
                self.ledger.abandoned += 1
                self.send(self.client, "tx_done", self, False)
                return
            self.ledger.retries += 1
            self.send(self.bank, "prepare", self.client, self)
        elif tag == "prepared":
            self.prepared = True
            self._walk()
        elif tag == "found":
            self.payee_bank = msg[1]
            self._walk()
        elif tag == "ok":
            self.ledger.committed.append((self.client.name, self.payee.name))
            self.send(self.client, "tx_done", self, True)

    def _walk(self) -> None:
        if self.payee_bank is not None and self.prepared:
            self.send(self.bank, "commit", self.client, "minus", self)
            self.send(self.payee_bank, "commit", self.payee, "plus", self)


class Client2(Actor):
    """Spawns one Transaction actor per transfer and waits for them to finish."""

    kind = "client"
    transaction_class: type[Actor] = Transaction2

    def __init__(self, system: ActorSystem, name: str, bank: Actor, ledger: _Ledger, max_retries: int,
                 counter: list[int]) -> None:
        super().__init__(system, name)
        self.bank, self.ledger, self.max_retries, self.counter = bank, ledger, max_retries, counter
        self.current: list[Actor] = []

    def handle(self, msg: tuple[Any, ...]) -> None:
        if msg[0] == "transfer_new":
            to = msg[1]
            self.counter[0] += 1
            tx = Transaction2(self.system, f"tx-{self.counter[0]}", self, to, self.bank, self.ledger,
                              self.max_retries)
            self.current.append(tx)
            self.send(self.bank, "transfer", self, to, tx)
            self.send(self.bank, "prepare", self, tx)
        elif msg[0] == "tx_done":
            i = _index(self, self.current, msg[1])
            if i >= 0:
                del self.current[i]


# --------------------------------------------------------------------------- iteration 3

class Account(Actor):
    """One client's balance."""

    kind = "account"

    def __init__(self, system: ActorSystem, name: str) -> None:
        super().__init__(system, name)
        self.cash = INITIAL_BALANCE

    def handle(self, msg: tuple[Any, ...]) -> None:
        tag = msg[0]
        if tag == "prepare":
            self.send(msg[1], "prepared" if self.cash > 0 else "error")
        elif tag == "commit":
            _, op, tx = msg
            if op == "minus":
                if self.cash > 0:
                    self.cash -= 1
                    self.send(tx, "ok")
                else:
                    self.send(tx, "error")
            else:
                self.cash += 1
        elif tag == "rollback":
            self.cash -= 1


class Bank3(Actor):
    """Only finds accounts: maps its clients to their Account actors."""

    kind = "bank"

    def __init__(self, system: ActorSystem, name: str, coordinator: Actor) -> None:
        super().__init__(system, name)
        self.coordinator = coordinator
        self.clients: list[Actor] = []
        self.accounts: list[Account] = []

    def handle(self, msg: tuple[Any, ...]) -> None:
        tag = msg[0]
        if tag == "client_add":
            c = msg[1]
            if _index(self, self.clients, c) < 0:
                self.clients.append(c)
                self.accounts.append(Account(self.system, f"account-{c.name.removeprefix('client-')}"))
        elif tag == "transfer":
            _, fc, tc, tx = msg
            i = _index(self, self.clients, fc)
            if i >= 0:
                self.send(tx, "from", self.accounts[i])
                self.send(self.coordinator, "find", tc, tx)
        elif tag == "has":
            _, tc, tx = msg
            i = _index(self, self.clients, tc)
            if i >= 0:
                self.send(tx, "found", self.accounts[i])

    def balances(self) -> dict[str, int]:
        return {c.name: a.cash for c, a in zip(self.clients, self.accounts, strict=True)}


class Transaction3(Transaction2):
    """Two-phase commit against the two Account actors."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.payer_account: Actor | None = None
        self.payee_account: Actor | None = None

    def handle(self, msg: tuple[Any, ...]) -> None:
        tag = msg[0]
        if tag == "from":
            self.payer_account = msg[1]
            self.send(self.payer_account, "prepare", self)
        elif tag == "found":
            self.payee_account = msg[1]
            self._walk()
        elif tag == "prepared":
            self.prepared = True
            self._walk()
        elif tag == "error":
            if self.payee_account is not None and self.prepared:
                self.send(self.payee_account, "rollback")
            self.prepared = False
            self.tries += 1
            if self.tries > self.max_retries:
                self.ledger.abandoned += 1
                self.send(self.client, "tx_done", self, False)
                return
            self.ledger.retries += 1
            assert self.payer_account is not None
            self.send(self.payer_account, "prepare", self)
        elif tag == "ok":
            self.ledger.committed.append((self.client.name, self.payee.name))
            self.send(self.client, "tx_done", self, True)

    def _walk(self) -> None:
        if self.payee_account is not None and self.prepared:
            assert self.payer_account is not None
            self.send(self.payer_account, "commit", "minus", self)
            self.send(self.payee_account, "commit", "plus", self)


class Client3(Client2):
    """Spawns one Transaction actor per transfer (account design)."""

    def handle(self, msg: tuple[Any, ...]) -> None:
        if msg[0] == "transfer_new":
            to = msg[1]
            self.counter[0] += 1
            tx = Transaction3(self.system, f"tx-{self.counter[0]}", self, to, self.bank, self.ledger,
                              self.max_retries)
            self.current.append(tx)
            self.send(self.bank, "transfer", self, to, tx)
        else:
            super().handle(msg)


# --------------------------------------------------------------------------- one run

@dataclass(frozen=True)
class RunResult:
    """One run: its summary row (:data:`RUNS_SCHEMA` fields) and one metrics row per actor."""

    run: dict[str, Any]
    actors: list[dict[str, Any]]


def simulate(
    iteration: int,
    banks: int,
    clients_per_bank: int,
    repeat: int = 1,
    max_retries: int = DEFAULT_MAX_RETRIES,
    max_messages: int = DEFAULT_MAX_MESSAGES,
    time_limit_s: float = 60.0,
    batch: int = 1,
) -> RunResult:
    """Run one simulation: every client transfers 1 unit to every other client.

    Stops by itself at quiescence, at ``max_messages`` or after ``time_limit_s``
    (then ``status`` says which). The garbage collector is paused during the run
    (as ``timeit`` does) so its pauses do not land in one actor's busy time. Raises UsageError for an unknown iteration or a
    size outside 1 ≤ banks, clients_per_bank and banks × clients_per_bank ≤ :data:`MAX_CLIENTS`.
    """
    if iteration not in ITERATIONS:
        raise UsageError(f"iteration must be one of {sorted(ITERATIONS)}, got {iteration}")
    if banks < 1 or clients_per_bank < 1:
        raise UsageError(f"banks and clients_per_bank must be ≥ 1, got {banks} and {clients_per_bank}")
    n = banks * clients_per_bank
    if n > MAX_CLIENTS:
        raise UsageError(f"banks × clients_per_bank = {banks} × {clients_per_bank} = {n} clients exceeds the cap "
                         f"of {MAX_CLIENTS}")
    t_start = time.perf_counter()
    system = ActorSystem(max_messages=max_messages, deadline=t_start + time_limit_s, batch=batch)
    ledger = _Ledger()
    counter = [0]
    coord: Actor = Coordinator1(system, "coordinator") if iteration == 1 else Coordinator2(system, "coordinator")
    bank_cls: type[Bank1] | type[Bank3] = Bank1 if iteration == 1 else Bank2 if iteration == 2 else Bank3
    bank_list = [bank_cls(system, f"bank-{b}", coord) for b in range(1, banks + 1)]
    clients: list[Client1 | Client2] = []
    for b, bank in enumerate(bank_list, 1):
        system.deliver(bank, coord, ("host_add", bank))
        for k in range(1, clients_per_bank + 1):
            name = f"client-{b}-{k}"
            client: Client1 | Client2
            if iteration == 1:
                client = Client1(system, name, bank, ledger, max_retries)
            else:
                client = (Client2 if iteration == 2 else Client3)(system, name, bank, ledger, max_retries, counter)
            system.deliver(client, bank, ("client_add", client))
            clients.append(client)
    status = "ok"
    t0 = t_start
    gc_was_enabled = gc.isenabled()
    gc.disable()  # a collector pause would land in one arbitrary actor's busy time
    try:
        system.run()  # registrations
        t0 = time.perf_counter()
        for c in clients:
            for other in clients:
                if other is not c:
                    system.deliver(None, c, ("transfer_new", other))
        system.run()
    except SimulationLimit as exc:
        status = str(exc)
    finally:
        if gc_was_enabled:
            gc.enable()
    wall = time.perf_counter() - t0
    balances: dict[str, int] = {}
    for bank in bank_list:
        balances.update(bank.balances())
    transfers = n * (n - 1)
    net = {c.name: INITIAL_BALANCE for c in clients}
    for payer, payee in ledger.committed:
        net[payer] -= 1
        net[payee] += 1
    committed = len(ledger.committed)
    unanswered = sum(len(c.current) for c in clients)
    money_final = sum(balances.values())
    run = {
        "iteration": iteration, "banks": banks, "clients_per_bank": clients_per_bank, "repeat": repeat,
        "clients": n, "transfers": transfers, "wall_s": wall, "messages": system.messages,
        "actors": len(system.actors), "committed": committed, "abandoned": ledger.abandoned,
        "lost": max(transfers - committed - ledger.abandoned, unanswered), "retries": ledger.retries,
        "money_expected": INITIAL_BALANCE * n, "money_final": money_final,
        "money_conserved": money_final == INITIAL_BALANCE * n and min(balances.values()) >= 0,
        "ledger_consistent": balances == net, "status": status,
    }
    common = {"iteration": iteration, "banks": banks, "clients_per_bank": clients_per_bank,
              "repeat": repeat, "transfers": transfers}
    return RunResult(run=run, actors=[{**common, **a.metrics()} for a in system.actors])


# --------------------------------------------------------------------------- grids

def grid_cells(iterations: Sequence[int], banks: Sequence[int], clients_per_bank: Sequence[int],
               repeats: int = 1) -> list[tuple[int, int, int, int]]:
    """The (iteration, banks, clients_per_bank, repeat) runs of a grid, checked against the caps."""
    cells = [(it, b, c, r) for r in range(1, repeats + 1) for it in iterations for b in banks for c in clients_per_bank]
    if len(cells) > MAX_RUNS:
        raise UsageError(f"{len(cells)} runs requested (iterations × banks × clients_per_bank × repeats); "
                         f"the cap is {MAX_RUNS}")
    for it, b, c, _ in cells:
        if it not in ITERATIONS:
            raise UsageError(f"iterations: each must be one of {sorted(ITERATIONS)}, got {it}")
        if b < 1 or c < 1 or b * c > MAX_CLIENTS:
            raise UsageError(f"grid cell {b} banks × {c} clients per bank is outside 1..{MAX_CLIENTS} clients")
    # small runs first so a time limit cuts the largest
    return sorted(cells, key=lambda x: (x[1] * x[2], x[0], x[1], x[3]))


def run_grid(
    iterations: Sequence[int] = (1, 2, 3),
    banks: Sequence[int] = (1, 2, 3, 4, 5),
    clients_per_bank: Sequence[int] = (2, 4, 6),
    repeats: int = 1,
    time_limit_s: float = 120.0,
    max_retries: int = DEFAULT_MAX_RETRIES,
    max_messages: int = DEFAULT_MAX_MESSAGES,
    progress: bool = True,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Simulate every cell of the grid (smallest first) within ``time_limit_s`` in total.

    Returns ``(runs, actors)`` frames matching :data:`RUNS_SCHEMA` and
    :data:`ACTOR_METRICS_SCHEMA`. Cells not started before the limit are left out
    (``runs.attrs["skipped"]`` counts them); a run cut by the limit has its status say so.
    """
    from tqdm.auto import tqdm

    cells = grid_cells(iterations, banks, clients_per_bank, repeats)
    deadline = time.perf_counter() + time_limit_s
    runs, actors = [], []
    skipped = 0
    bar = tqdm(cells, desc="actor runs", unit="run", disable=not progress)
    for it, b, c, r in bar:
        left = deadline - time.perf_counter()
        if left <= 0:
            skipped += 1
            continue
        bar.set_postfix_str(f"it{it} {b}×{c}")
        res = simulate(it, b, c, r, max_retries=max_retries, max_messages=max_messages, time_limit_s=left)
        runs.append(res.run)
        actors.extend(res.actors)
    bar.close()
    run_df = _runs_frame(runs)
    run_df.attrs["skipped"] = skipped
    return run_df, _actors_frame(actors)


def _runs_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=RUNS_SCHEMA.names())
    return validate(df.astype(_dtypes(RUNS_SCHEMA)), RUNS_SCHEMA)


def _actors_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=ACTOR_METRICS_SCHEMA.names())
    return validate(df.astype(_dtypes(ACTOR_METRICS_SCHEMA)), ACTOR_METRICS_SCHEMA)


def _dtypes(schema: Schema) -> dict[str, str]:
    """Column → numpy dtype name of a capture schema (text columns stay Python objects)."""
    return {c.name: {"int": "int64", "float": "float64", "bool": "bool", "string": "object"}[c.kind]
            for c in schema.columns}


def write_results(runs: pd.DataFrame, actors: pd.DataFrame, out_dir: str | os.PathLike,
                  gzip_actors: bool = False) -> tuple[Path, Path]:
    """Write ``runs.csv`` and ``actors.csv`` (``actors.csv.gz`` with ``gzip_actors``) into
    ``out_dir`` (created); returns both paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rp, ap = out / "runs.csv", out / ("actors.csv.gz" if gzip_actors else "actors.csv")
    r = runs.copy()
    r["wall_s"] = r["wall_s"].map(lambda v: f"{v:.6f}")
    r.to_csv(rp, index=False)
    a = actors.copy()
    a["busy_s"] = a["busy_s"].map(lambda v: f"{v:.7f}")
    if gzip_actors:
        a.to_csv(ap, index=False, compression={"method": "gzip", "mtime": 0})
    else:
        a.to_csv(ap, index=False)
    return rp, ap


def _rules(schema: Schema) -> dict[str, Rule]:
    """Every count and time of a capture is ≥ 0 and every text cell is non-empty."""
    return {c.name: NonEmpty() if c.kind == "string" else AtLeast(0) for c in schema.columns if c.kind != "bool"}


#: the least a runs table must give to be timed: one row per run (repeats are numbered in file order)
_TIMES_ONLY = Schema(name="actor_run_times", doc="Wall time per run of an actor benchmark.",
                     columns=tuple(c for c in RUNS_SCHEMA.columns
                                   if c.name in ("iteration", "banks", "clients_per_bank", "wall_s")))


def _positive_grid(row: dict[str, Any]) -> str | None:
    bad = [c for c in ("banks", "clients_per_bank") if int(row[c]) < 1]
    return f"{' and '.join(bad)} must be at least 1" if bad else None


def read_runs(source: Source, strict: bool = False) -> pd.DataFrame:
    """Load a ``runs.csv`` written by this lab (:data:`RUNS_SCHEMA`).

    A path or text with only ``iteration, banks, clients_per_bank, wall_s`` (another
    benchmark's run times) is read too: ``repeat`` numbers the runs of a cell in file order,
    ``clients`` and ``transfers`` are derived, and ``attrs["columns_missing"]`` lists the
    invariant columns it lacks (nothing is claimed about money or lost transfers then).

    Rows that do not parse, carry a negative number or empty text, or repeat a
    run (iteration, banks, clients_per_bank, repeat) go to ``attrs["rejects"]``;
    ``strict=True`` raises :class:`~workbench.errors.ParseError` for the first.
    """
    try:
        return read_table(source, RUNS_SCHEMA, strict=strict, rules=_rules(RUNS_SCHEMA),
                          key=("iteration", "banks", "clients_per_bank", "repeat"))
    except SchemaError as exc:
        if not isinstance(source, (str, os.PathLike)):
            raise
        try:
            df = read_table(source, _TIMES_ONLY, strict=strict, rules=_rules(_TIMES_ONLY),
                            check=_positive_grid)
        except SchemaError:
            raise SchemaError(f"{exc} (a table with only iteration, banks, clients_per_bank and wall_s is "
                              "accepted too: its runs are timed, not checked)") from None
    attrs = dict(df.attrs)
    df["repeat"] = df.groupby(["iteration", "banks", "clients_per_bank"]).cumcount().astype("int64") + 1
    df["clients"] = (df["banks"] * df["clients_per_bank"]).astype("int64")
    df["transfers"] = (df["clients"] * (df["clients"] - 1)).astype("int64")
    df = df[["iteration", "banks", "clients_per_bank", "repeat", "clients", "transfers", "wall_s"]]
    df.attrs.update(attrs)
    df.attrs["columns_missing"] = [c for c in RUNS_SCHEMA.names() if c not in df.columns]
    return df


def read_actor_metrics(source: Source, strict: bool = False) -> pd.DataFrame:
    """Load an ``actors.csv`` (or ``.csv.gz``) written by this lab (:data:`ACTOR_METRICS_SCHEMA`).

    Rejected like :func:`read_runs`, and also rows with an unknown actor kind or a
    repeated actor within a run.

    A path or text with only ``iteration, banks, clients_per_bank, repeat, actor, kind,
    busy_s`` (another benchmark's per-actor busy time, any actor kinds) is read too:
    ``transfers`` is derived and ``attrs["columns_missing"]`` lists the metrics it lacks.
    """
    keys = ("iteration", "banks", "clients_per_bank", "repeat", "actor")
    try:
        return read_table(source, ACTOR_METRICS_SCHEMA, strict=strict, rules=_rules(ACTOR_METRICS_SCHEMA),
                          key=keys, check=_known_kind)
    except SchemaError as exc:
        if not isinstance(source, (str, os.PathLike)):
            raise
        try:
            df = read_table(source, _BUSY_ONLY, strict=strict, rules=_rules(_BUSY_ONLY), key=keys,
                            check=_positive_grid)
        except SchemaError:
            raise SchemaError(f"{exc} (a table with only iteration, banks, clients_per_bank, repeat, actor, kind "
                              "and busy_s is accepted too)") from None
    attrs = dict(df.attrs)
    clients = df["banks"] * df["clients_per_bank"]
    df.insert(4, "transfers", (clients * (clients - 1)).astype("int64"))
    df.attrs.update(attrs)
    df.attrs["columns_missing"] = [c for c in ACTOR_METRICS_SCHEMA.names() if c not in df.columns]
    return df


#: the least a per-actor table must give to find bottlenecks by busy time
_BUSY_ONLY = Schema(name="actor_busy_time", doc="Busy time per actor per run of an actor benchmark.",
                    columns=tuple(c for c in ACTOR_METRICS_SCHEMA.columns
                                  if c.name in ("iteration", "banks", "clients_per_bank", "repeat", "actor", "kind",
                                                "busy_s")))


def _known_kind(row: dict[str, Any]) -> str | None:
    return None if row["kind"] in KINDS else f"unknown actor kind {row['kind']!r}; expected one of {KINDS}"


# --------------------------------------------------------------------------- command line

def _ints(text: str) -> list[int]:
    try:
        vals = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, got {text!r}") from None
    if not vals:
        raise argparse.ArgumentTypeError("expected at least one number")
    return vals


def _cmd(args: argparse.Namespace) -> int:
    from ..models.scaling import bottleneck_agreement, cell_bottlenecks

    try:
        grid_cells(args.iterations, args.banks, args.clients_per_bank, args.repeats)
    except ValueError as exc:
        print(f"workbench lab actors: {exc}", file=sys.stderr)
        return 2
    runs, actors = run_grid(args.iterations, args.banks, args.clients_per_bank, args.repeats,
                            time_limit_s=args.time_limit, max_retries=args.max_retries,
                            max_messages=args.max_messages, progress=not args.quiet)
    rp, ap = write_results(runs, actors, args.out, gzip_actors=args.gzip)
    ok = runs["status"].eq("ok") & runs["money_conserved"] & runs["ledger_consistent"] & runs["lost"].eq(0)
    print(f"{len(runs)} runs ({runs.attrs.get('skipped', 0)} skipped by the time limit); "
          f"{int(ok.sum())} complete with money conserved and no transfer lost")
    if not actors.empty:
        cells = cell_bottlenecks(actors, by="work")
        for it in sorted(int(i) for i in cells["iteration"].unique()):
            d = bottleneck_agreement(cells, it, by="work")
            print(f"iteration {it} ({ITERATIONS[it]}): one bottleneck kind in every cell? {d.verdict}: {d.because}")
    print(f"wrote {rp} and {ap}")
    return 0 if bool(ok.all()) else 1


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench lab actors``: simulate the bank 2PC over a grid and write runs/actors CSVs."""
    p = subparsers.add_parser("actors", help="actor simulation of a two-phase-commit bank, per-actor metrics",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="output folder for runs.csv and actors.csv")
    p.add_argument("--iterations", type=_ints, default=[1, 2, 3], help="designs to run, e.g. 1,2,3")
    p.add_argument("--banks", type=_ints, default=[1, 2, 3, 4, 5], help="bank counts, e.g. 1,2,3,4,5")
    p.add_argument("--clients-per-bank", type=_ints, default=[2, 4, 6], help="clients per bank, e.g. 2,4,6")
    p.add_argument("--repeats", type=int, default=1, help="runs per grid cell (default 1)")
    p.add_argument("--time-limit", type=float, default=120.0, help="wall-time limit for the whole grid, s")
    p.add_argument("--max-retries", type=int, default=DEFAULT_MAX_RETRIES,
                   help="a transfer is abandoned after this many failed attempts")
    p.add_argument("--max-messages", type=int, default=DEFAULT_MAX_MESSAGES, help="message cap per run")
    p.add_argument("--gzip", action="store_true", help="write actors.csv.gz instead of actors.csv")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd)
