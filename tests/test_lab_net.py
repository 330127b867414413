"""The one loopback check: odd spellings get the same clean refusal, before any socket, in every lab."""
from __future__ import annotations

import socket
import subprocess

import pytest

from workbench.errors import ArgumentTypeError, UsageError
from workbench.lab import nagle, stalls
from workbench.lab._net import check_loopback

ODD = ["::1%eth0", "::1%1", "fe80::1%lo", "[::1]", " 127.0.0.1", "127.0.0.1\n", "localhost.", "", "127.1",
       "0x7f.0.0.1", "::ffff:127.0.0.1", "127.0.0.1:80", "::", "0.0.0.0"]


@pytest.fixture
def no_sockets(monkeypatch: pytest.MonkeyPatch) -> None:
    class Refused(socket.socket):
        def __init__(self, *_args: object, **_kw: object) -> None:
            raise AssertionError("a socket was opened before the address was refused")

    def no_process(*_args: object, **_kw: object) -> None:
        raise AssertionError("a process was started before the address was refused")

    monkeypatch.setattr(socket, "socket", Refused)
    monkeypatch.setattr(subprocess, "Popen", no_process)


@pytest.mark.parametrize("host", ODD)
def test_odd_hosts_are_refused_cleanly(host: str) -> None:
    with pytest.raises(UsageError, match="host="):
        check_loopback(host, "demo")


@pytest.mark.parametrize("host", ["::1%eth0", "[::1]", "127.0.0.1:80"])
def test_each_lab_refuses_them_before_any_socket(host: str, no_sockets: None, tmp_path) -> None:
    with pytest.raises(UsageError, match="loopback|zone index"):
        nagle.serve(host)
    with pytest.raises(UsageError, match="loopback|zone index"):
        nagle.load_run(host, 1, 10, 1)
    with pytest.raises(UsageError, match="loopback|zone index"):
        stalls.run_capture(tmp_path / "cap", host=host)


def test_wrong_type_is_an_argument_type_error() -> None:
    with pytest.raises(ArgumentTypeError, match="as text, got int"):
        check_loopback(2130706433, "demo")  # type: ignore[arg-type]
