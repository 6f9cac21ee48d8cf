"""A distance between clients and a server: a round-trip time and a bandwidth, put on the
way by toxiproxy (Shopify's TCP proxy for simulating network conditions, built by the
install step from its Go module), on 127.0.0.1, and measured.

The kernel's netem would do this on a pair of network namespaces; this project's kernel
has no netem (``tc qdisc ... netem``: "Specified qdisc kind is unknown"), so a proxy does
it: each client connection goes to the proxy, which holds every chunk of data half the
round trip on the way up and half on the way down (toxiproxy's ``latency`` toxic), and
caps each direction at the bandwidth (its ``bandwidth`` toxic). A TCP handshake with the
proxy is not held (it accepts on loopback at once): each new connection costs the round
trips of its data -- TLS's and SSH's handshakes included -- but not TCP's own.

Every distance is measured before it is used (:meth:`Toxiproxy.calibrate`): 1-byte
exchanges through a proxy with the same toxics to an echo server of the run's own, their
median beside the requested round trip; a bandwidth by a timed transfer.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import statistics
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vcsbench.errors import VcsbenchError
from vcsbench.results.load import distance_label
from vcsbench.servers.server import HOST, Server, free_port

TOXIPROXY = "toxiproxy-server"
TOXIPROXY_MODULE = "github.com/Shopify/toxiproxy/v2/cmd/server"
TOXIPROXY_VERSION = "v2.12.0"
CALIBRATION_EXCHANGES = 40
TOLERANCE = 0.10
"""A measured round trip further than this from the requested one is reported as missed."""
BANDWIDTH_PROBE_BYTES = 512 * 1024


@dataclass(frozen=True, order=True)
class Distance:
    """A round trip (ms) and, optionally, a bandwidth each way (kbit/s)."""

    rtt_ms: float
    bandwidth_kbit: float | None = None

    @property
    def label(self) -> str:
        return distance_label(self.rtt_ms, self.bandwidth_kbit)

    def to_json(self) -> dict[str, float | None]:
        return {"rtt_ms": self.rtt_ms, "bandwidth_kbit": self.bandwidth_kbit}


_TIME = re.compile(r"(\d+(?:\.\d+)?)(ms|s)?")
_RATE = re.compile(r"(\d+(?:\.\d+)?)(kbit|mbit|gbit)", re.IGNORECASE)
_RATE_KBIT = {"kbit": 1.0, "mbit": 1000.0, "gbit": 1_000_000.0}


def parse_rtts(text: str, option: str = "--rtt") -> tuple[float, ...]:
    """``0,10,50ms`` -> (0.0, 10.0, 50.0): milliseconds (``ms`` or ``s`` on any item; a
    bare number is ms)."""
    found: list[float] = []
    for item in (part.strip() for part in text.split(",")):
        match = _TIME.fullmatch(item)
        if match is None:
            raise VcsbenchError(
                f"{option} {item!r} is not a round-trip time; give milliseconds, "
                "comma-separated (e.g. 0,10,50ms or 0.1s)"
            )
        ms = float(match.group(1)) * (1000 if match.group(2) == "s" else 1)
        if ms != int(ms):
            raise VcsbenchError(
                f"{option} {item!r} is not a whole number of milliseconds (the proxy's unit)"
            )
        if ms > 10_000:
            raise VcsbenchError(f"{option} {item!r} is over 10 s; give at most 10000ms")
        found.append(ms)
    if len(set(found)) != len(found):
        raise VcsbenchError(f"{option} {text!r} names a round trip twice")
    return tuple(found)


def parse_bandwidth(text: str, option: str = "--bandwidth") -> float:
    """``100mbit`` -> 100000.0 kbit/s."""
    match = _RATE.fullmatch(text.strip())
    if match is None or float(match.group(1)) <= 0:
        raise VcsbenchError(
            f"{option} {text!r} is not a bandwidth; give kbit, mbit or gbit per second "
            "(e.g. 100mbit)"
        )
    kbit = float(match.group(1)) * _RATE_KBIT[match.group(2).lower()]
    if kbit < 8:
        raise VcsbenchError(f"{option} {text!r} is under 8kbit (1 KB/s), the proxy's least")
    return kbit


def toxiproxy_binary() -> str:
    """The toxiproxy server the install step built (beside this interpreter), or one on
    PATH; one line saying how to get it otherwise."""
    beside = Path(sys.executable).parent / TOXIPROXY
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(TOXIPROXY)
    if found is None:
        raise VcsbenchError(
            f"{TOXIPROXY} is not installed (needed for --rtt and --bandwidth); `make "
            f"install` builds it, or: GOBIN=$(mktemp -d) go install "
            f"{TOXIPROXY_MODULE}@{TOXIPROXY_VERSION}, then put its `server` on PATH as "
            f"{TOXIPROXY}"
        )
    return found


class Toxiproxy:
    """One toxiproxy server for a run (its API on 127.0.0.1), holding the proxies in
    front of the run's servers."""

    def __init__(self, logs: Path) -> None:
        self.api_port = free_port(HOST)
        # no proxy at its start (they are made through its API); the file names the
        # process as this run's, with its logs
        config = logs / "toxiproxy.json"
        config.write_text("[]\n")
        argv = [toxiproxy_binary(), "-host", HOST, "-port", str(self.api_port)]
        argv += ["-config", str(config)]
        self.server = Server(
            "toxiproxy", argv, self.api_port, f"http://{HOST}:{self.api_port}",
            logs / "toxiproxy.log",
        )  # fmt: skip

    def _call(self, method: str, path: str, body: object = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.server.url_base}{path}",
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                text = answer.read()
        except (urllib.error.URLError, OSError) as exc:
            raise VcsbenchError(f"toxiproxy refused {method} {path}: {exc}") from None
        return json.loads(text) if text else None

    def proxy(self, name: str, upstream: tuple[str, int], host: str = HOST) -> int:
        """A proxy to ``upstream``, listening on ``host`` at a free port, which it returns."""
        port = free_port(host)
        self._call(
            "POST",
            "/proxies",
            {"name": name, "listen": f"{host}:{port}", "upstream": f"{upstream[0]}:{upstream[1]}"},
        )
        return port

    def apply(self, name: str, distance: Distance) -> None:
        """Proxy ``name``'s toxics set to ``distance``: half the round trip each way (the
        odd millisecond down; toxiproxy takes whole milliseconds), the bandwidth each way."""
        for toxic in self._call("GET", f"/proxies/{name}/toxics") or []:
            self._call("DELETE", f"/proxies/{name}/toxics/{toxic['name']}")
        up = int(distance.rtt_ms) // 2
        for stream, latency in (("upstream", up), ("downstream", int(distance.rtt_ms) - up)):
            if distance.rtt_ms > 0:
                self._call(
                    "POST",
                    f"/proxies/{name}/toxics",
                    {
                        "name": f"latency-{stream}",
                        "type": "latency",
                        "stream": stream,
                        "attributes": {"latency": latency, "jitter": 0},
                    },
                )
            if distance.bandwidth_kbit is not None:
                self._call(
                    "POST",
                    f"/proxies/{name}/toxics",
                    {
                        "name": f"bandwidth-{stream}",
                        "type": "bandwidth",
                        "stream": stream,
                        "attributes": {"rate": max(1, round(distance.bandwidth_kbit / 8))},
                    },
                )

    def calibrate(self, distance: Distance) -> dict[str, Any]:
        """What a client sees through a proxy with ``distance``'s toxics: the median of
        :data:`CALIBRATION_EXCHANGES` 1-byte round trips to an echo server of the run's
        own (and a timed transfer where a bandwidth is set), beside what was asked."""
        with _EchoServer() as echo:
            name = f"calibration-{len(self._call('GET', '/proxies') or {})}"
            port = self.proxy(name, (HOST, echo.port))
            self.apply(name, distance)
            try:
                rtts = _exchanges(port, CALIBRATION_EXCHANGES)
                rate = _transfer_kbit(port) if distance.bandwidth_kbit is not None else None
            finally:
                self._call("DELETE", f"/proxies/{name}")
        measured = statistics.median(rtts)
        found: dict[str, Any] = {
            "requested_rtt_ms": distance.rtt_ms,
            "measured_rtt_ms": measured,
            "measured_rtt_ms_p10_p90": [_quantile(rtts, 0.1), _quantile(rtts, 0.9)],
            "exchanges": len(rtts),
            "method": f"median of {len(rtts)} 1-byte round trips through a proxy with the "
            "same toxics to an echo server on 127.0.0.1",
        }
        # a round trip of 0 is the proxy's own: nothing to miss
        missed = distance.rtt_ms > 0 and abs(measured - distance.rtt_ms) > TOLERANCE * (
            distance.rtt_ms
        )
        if distance.bandwidth_kbit is not None:
            found["requested_bandwidth_kbit"] = distance.bandwidth_kbit
            found["measured_bandwidth_kbit"] = rate
            missed = missed or (
                rate is not None
                and abs(rate - distance.bandwidth_kbit) > TOLERANCE * distance.bandwidth_kbit
            )
        found["within_tolerance"] = not missed
        found["tolerance"] = TOLERANCE
        return found


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _exchanges(port: int, count: int) -> list[float]:
    with socket.create_connection((HOST, port), timeout=30) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        found = []
        for _ in range(count):
            start = time.perf_counter()
            sock.sendall(b"x")
            if sock.recv(1) != b"x":
                raise VcsbenchError("the distance's calibration got no echo through the proxy")
            found.append((time.perf_counter() - start) * 1000)
    return found


def _transfer_kbit(port: int) -> float:
    """kbit/s of :data:`BANDWIDTH_PROBE_BYTES` sent and echoed back (the slower way),
    from the first byte back to the last: the rate, without the start's round trip."""
    data = b"v" * BANDWIDTH_PROBE_BYTES
    with socket.create_connection((HOST, port), timeout=120) as sock:
        sender = threading.Thread(target=sock.sendall, args=(data,), daemon=True)
        sender.start()
        first = sock.recv(1 << 16)
        start = time.perf_counter()
        got = 0
        while len(first) + got < len(data):
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            got += len(chunk)
        seconds = time.perf_counter() - start
        sender.join()
    return got * 8 / 1000 / seconds


class _EchoServer:
    """An echo server on 127.0.0.1 for one calibration, in threads of this process; it
    accepts only until it is closed."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind((HOST, 0))
        self.sock.listen(4)
        self.port = int(self.sock.getsockname()[1])
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> _EchoServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._echo, args=(conn,), daemon=True).start()

    @staticmethod
    def _echo(conn: socket.socket) -> None:
        with conn:
            try:
                while data := conn.recv(1 << 16):
                    conn.sendall(data)
            except OSError:
                return
