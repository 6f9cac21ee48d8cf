"""A certificate made for one run: self-signed, for the address the server listens on, made
by ``openssl`` into a directory of the run's own (0700, inside the sandbox: it goes with
the sandbox, after a SIGKILL too). Clients trust exactly it (git's ``GIT_SSL_CAINFO``,
Subversion's ``ssl-authority-files``, Mercurial's ``web.cacerts``), never the machine's
authorities."""

from __future__ import annotations

import ipaddress
import subprocess
from dataclasses import dataclass
from pathlib import Path

from vcsbench.errors import VcsbenchError


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Certificate:
    cert: Path
    key: Path
    host: str
    fingerprint: str
    """SHA-256 of the certificate, as ``openssl x509 -fingerprint`` prints it."""

    @classmethod
    def make(cls, directory: Path, host: str) -> Certificate:
        """A P-256 key and a certificate for ``host`` valid two days, in ``directory``
        (which must be the run's own). Subversion's serf matches the host against the
        subject's name and the DNS names, OpenSSL an address against the IP names: the
        host is given as all three."""
        cert, key = directory / "server.crt", directory / "server.key"
        names = f"DNS:{host}" + (f",IP:{host}" if _is_ip(host) else "")
        argv = [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj", f"/CN={host}",
            "-addext", f"subjectAltName={names}",
            # a server's certificate, not an authority's: clients trust it by itself
            "-addext", "basicConstraints=critical,CA:FALSE",
            "-addext", "extendedKeyUsage=serverAuth",
            "-keyout", str(key), "-out", str(cert),
        ]  # fmt: skip
        made = subprocess.run(argv, capture_output=True, text=True, check=False)
        if made.returncode != 0:
            raise VcsbenchError(
                f"openssl could not make the run's certificate: {made.stderr.strip()[-200:]}"
            )
        key.chmod(0o600)
        printed = subprocess.run(
            ["openssl", "x509", "-in", str(cert), "-noout", "-fingerprint", "-sha256"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return cls(cert, key, host, printed.strip().split("=", 1)[-1])

    def describe(self) -> dict[str, str]:
        return {
            "certificate": f"self-signed for {self.host}, made for the run (openssl, P-256)",
            "sha256": self.fingerprint,
        }
