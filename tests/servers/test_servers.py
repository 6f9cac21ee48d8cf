"""The servers vcsbench starts and the transports to them: TLS trusted by the run's
certificate alone, ssh open to the run's key for the VCS's command alone, a distance
measured as asked, and nothing of any of them left once stopped."""

from __future__ import annotations

import os
import shlex
import ssl
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from helpers import skip_or_fail

from vcsbench.backends._git import git_env
from vcsbench.errors import VcsbenchError
from vcsbench.servers.distance import Distance, Toxiproxy, parse_bandwidth, parse_rtts
from vcsbench.servers.transports import TRANSPORTS, Service


@pytest.fixture
def served() -> Iterator[Path]:
    """A directory others may enter (Apache's user reads below it), with a bare git
    repository in ``repos``."""
    if os.geteuid() != 0:
        skip_or_fail("the servers' tests start sshd and Apache as root")
    top = Path(tempfile.mkdtemp(prefix="served-"))
    os.chmod(top, 0o711)
    (top / "repos").mkdir()
    subprocess.run(
        ["git", "init", "-q", "--bare", str(top / "repos" / "r")], check=True, env=git_env()
    )
    (top / "logs").mkdir()
    yield top
    subprocess.run(["rm", "-rf", "--one-file-system", str(top)], check=True)


def _start(name: str, top: Path, distance: Distance | None = None) -> tuple[Service, list[int]]:
    transport = TRANSPORTS[name]
    transport.require()
    service = Service(
        transport, top / "repos", top / "credentials", top / "logs", distance=distance
    )
    started: list[int] = []
    service.start(lambda pid, group: started.append(pid))
    return service, started


def _stop(service: Service, started: list[int]) -> None:
    forgotten: list[int] = []
    service.stop(forgotten.append)
    assert sorted(forgotten) == sorted(started)
    assert not any(psutil.pid_exists(pid) and _alive(pid) for pid in started)
    assert not (service.home).exists()  # no key, no certificate kept


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _handshake(port: int, context: ssl.SSLContext) -> None:
    import socket

    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as sock,
        context.wrap_socket(sock, server_hostname="127.0.0.1"),
    ):
        pass


def test_https_is_trusted_with_the_runs_certificate_and_nothing_else(served: Path) -> None:
    from vcsbench.servers.apache import apache_ids

    uid, gid = apache_ids()  # Apache's user serves (and owns) the repositories
    for where, dirs, files in os.walk(served / "repos"):
        for name in [where, *(os.path.join(where, n) for n in dirs + files)]:
            os.lchown(name, uid, gid)
    service, started = _start("apache-git-https", served)
    try:
        assert service.ca_file is not None
        port = service.server.port if service.server else 0
        _handshake(port, ssl.create_default_context(cafile=service.ca_file))
        with pytest.raises(ssl.SSLCertVerificationError):
            _handshake(port, ssl.create_default_context())  # the machine's authorities
        env = {**git_env(), **service.client_env}
        listed = subprocess.run(
            ["git", "ls-remote", service.url("r")], env=env, capture_output=True, text=True
        )
        assert listed.returncode == 0, listed.stderr
        refused = subprocess.run(
            ["git", "ls-remote", service.url("r")], env=git_env(), capture_output=True, text=True
        )
        assert refused.returncode != 0 and "certificate" in refused.stderr
        described = service.describe()
        assert described["tls"]["sha256"].count(":") == 31
        assert "key" not in str(described).replace("Key", "")  # fingerprints, never keys
    finally:
        _stop(service, started)


def test_ssh_lets_the_runs_key_run_the_vcs_command_alone(served: Path) -> None:
    had_run_sshd = Path("/run/sshd").exists()
    service, started = _start("git-ssh", served)
    try:
        env = {**git_env(), **service.client_env}
        listed = subprocess.run(
            ["git", "ls-remote", service.url("r")], env=env, capture_output=True, text=True
        )
        assert listed.returncode == 0, listed.stderr
        assert service.keys is not None and service.server is not None
        ssh = shlex.split(service.keys.client_command(service.server.port))
        user_at = f"{service.url_base.split('//')[1].split('@')[0]}@127.0.0.1"
        shell = subprocess.run([*ssh, user_at, "id"], capture_output=True, text=True)
        assert shell.returncode != 0 and "uid=" not in shell.stdout  # git-shell's refusal
        password = subprocess.run(
            [*ssh, "-o", "PubkeyAuthentication=no", "-o", "PreferredAuthentications=password",
             user_at, "true"],
            capture_output=True, text=True,
        )  # fmt: skip
        assert password.returncode == 255 and "Permission denied" in password.stderr
        stranger = served / "stranger"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)],
                       check=True)  # fmt: skip
        other = [part if part != str(service.keys.client_key) else str(stranger) for part in ssh]
        unknown = subprocess.run([*other, user_at, "true"], capture_output=True, text=True)
        assert unknown.returncode == 255 and "Permission denied" in unknown.stderr
        # sshd's confinement directory was made in its own mount namespace, not here
        assert Path("/run/sshd").exists() == had_run_sshd
        assert service.describe()["ssh"]["forced_command"].startswith("cd ")
    finally:
        _stop(service, started)


def _toxiproxy_or_skip() -> None:
    from vcsbench.servers.distance import toxiproxy_binary

    try:
        toxiproxy_binary()
    except VcsbenchError as exc:
        skip_or_fail(str(exc))


@pytest.mark.parametrize("rtt_ms", [0, 60])
def test_the_round_trip_a_client_sees_follows_the_requested_one(
    tmp_path: Path, rtt_ms: int
) -> None:
    _toxiproxy_or_skip()
    proxy = Toxiproxy(tmp_path)
    proxy.server.start()
    try:
        found = proxy.calibrate(Distance(rtt_ms))
    finally:
        proxy.server.stop()
    measured = found["measured_rtt_ms"]
    assert found["exchanges"] == 40
    if rtt_ms:
        assert rtt_ms <= measured <= rtt_ms * 1.10
        assert found["within_tolerance"]
    else:
        assert measured < 5  # the proxy's own hop on loopback


def test_a_bandwidth_is_measured_by_a_timed_transfer(tmp_path: Path) -> None:
    _toxiproxy_or_skip()
    proxy = Toxiproxy(tmp_path)
    proxy.server.start()
    try:
        found = proxy.calibrate(Distance(0, parse_bandwidth("4mbit")))
    finally:
        proxy.server.stop()
    assert 4000 * 0.9 <= found["measured_bandwidth_kbit"] <= 4000 * 1.1
    assert found["within_tolerance"]


def test_distances_are_whole_milliseconds_and_rates_per_second() -> None:
    assert (0.0, 10.0, 50.0, 1000.0) == parse_rtts("0,10,50ms,1s")
    assert 100_000 == parse_bandwidth("100mbit")
    with pytest.raises(VcsbenchError, match="names a round trip twice"):
        parse_rtts("10,10")
