"""Apache httpd as a VCS host serves: Subversion through mod_dav_svn, git through ``git
http-backend`` (CGI), Mercurial through hgweb under mod_wsgi (Mercurial's own way to
publish repositories from a web server), each over the repositories below one directory,
anonymous writes allowed; over TLS with the run's certificate where asked.

Started by root it serves as :data:`APACHE_USER` (it refuses to serve as root), so the
repositories it writes are made as that user (:func:`as_server_user`).
"""

from __future__ import annotations

import os
from pathlib import Path

from vcsbench.servers.server import HOST, Server, free_port
from vcsbench.servers.tls import Certificate

APACHE = "/usr/sbin/apache2"
APACHE_MODULES = "/usr/lib/apache2/modules"
APACHE_USER = "www-data"
"""Apache started by root serves as this user (it refuses to serve as root): the
repositories it writes must be this user's, so a root run makes them as this user."""
MAX_REQUEST_WORKERS = 150
"""Requests Apache serves at once (event MPM); beyond them connections wait in its
listen backlog."""
HGWEB_PROCESSES = (4, 4)
"""mod_wsgi daemon processes and threads for hgweb: Python serves one request at a time
per process, so several processes, as a Mercurial host runs them."""

MODULES = {
    "svn": ("dav", "dav_svn"),
    "git": ("alias", "env", "cgid"),
    "hg": ("wsgi",),
}
"""The modules each VCS's location needs, beside the event MPM and authz_core."""


def _svn(root: Path, run_dir: Path) -> list[str]:
    return [
        "<Location /svn>",
        "  DAV svn",
        f"  SVNParentPath {root}",
        "  Require all granted",
        "</Location>",
    ]


def _git(root: Path, run_dir: Path) -> list[str]:
    return [
        f"ScriptSock {run_dir / 'cgid.sock'}",
        f"SetEnv GIT_PROJECT_ROOT {root}",
        "SetEnv GIT_HTTP_EXPORT_ALL 1",
        # repositories another user owns (a benchmark's, made by the run) are served
        # too: git refuses them otherwise ("dubious ownership")
        "SetEnv GIT_CONFIG_COUNT 1",
        "SetEnv GIT_CONFIG_KEY_0 safe.directory",
        "SetEnv GIT_CONFIG_VALUE_0 *",
        "SetEnv REMOTE_USER student",  # git http-backend takes pushes from a named user
        "ScriptAlias /git/ /usr/lib/git-core/git-http-backend/",
        "<Location /git>",
        "  Require all granted",
        "</Location>",
    ]


def _hg(root: Path, run_dir: Path) -> list[str]:
    """hgweb over every repository directly below ``root``, re-read at each request
    (``refreshinterval = 0``): a repository made at a student's first visit is served at
    once. Its configuration and script are the run's; no hgrc of the machine is read."""
    config = run_dir / "hgweb.config"
    config.write_text(
        f"[paths]\n/ = {root}/*\n[web]\nallow-push = *\npush_ssl = false\nrefreshinterval = 0\n"
    )
    script = run_dir / "hgweb.wsgi"
    script.write_text(
        "import os\n"
        'os.environ["HGRCPATH"] = ""\n'
        'os.environ["HGENCODING"] = "UTF-8"\n'
        # imported whole, not on demand: demandimport's lazy modules, first touched by
        # two request threads at once, raised AttributeError (HTTP 500) here
        "from mercurial.hgweb import hgweb, request\n"
        f"application = hgweb({str(config).encode()!r})\n"
    )
    processes, threads = HGWEB_PROCESSES
    return [
        f"WSGISocketPrefix {run_dir / 'wsgi'}",
        f"WSGIDaemonProcess hgweb processes={processes} threads={threads} "
        "display-name=vcsbench-hgweb",
        f"WSGIScriptAlias /hg {script}",
        "<Location /hg>",
        "  WSGIProcessGroup hgweb",
        "  WSGIApplicationGroup %{GLOBAL}",
        "  Require all granted",
        "</Location>",
    ]


LOCATIONS = {"svn": _svn, "git": _git, "hg": _hg}


def apache(
    root: Path,
    logs: Path,
    vcs: str,
    port: int = 0,
    host: str = HOST,
    certificate: Certificate | None = None,
) -> Server:
    """Apache httpd (event MPM) serving ``vcs``'s repositories below ``root`` at
    ``/svn``, ``/git`` or ``/hg``; with ``certificate``, over TLS only. Its runtime files
    go beside ``root``, where its user can reach them; its logs, opened before it changes
    user, into ``logs``."""
    port = port or free_port(host)
    run_dir = root.parent / "apache-run"
    run_dir.mkdir(exist_ok=True)
    modules = ["mpm_event", "authz_core", *MODULES[vcs]]
    if certificate is not None:
        modules += ["ssl", "socache_shmcb"]
    lines = [f"LoadModule {m}_module {APACHE_MODULES}/mod_{m}.so" for m in modules]
    lines += [
        f"ServerName {host}",
        f"Listen {host}:{port}",
        f"DefaultRuntimeDir {run_dir}",
        f"PidFile {run_dir / 'apache.pid'}",
        f"ErrorLog {logs / 'apache-error.log'}",
        'LogFormat "%h %t \\"%r\\" %>s %b %D" timed',
        f"CustomLog {logs / 'apache-access.log'} timed",
        f"MaxRequestWorkers {MAX_REQUEST_WORKERS}",
    ]
    if certificate is not None:
        lines += [
            "SSLEngine on",
            f"SSLCertificateFile {certificate.cert}",
            f"SSLCertificateKeyFile {certificate.key}",
            f"SSLSessionCache shmcb:{run_dir / 'ssl-cache'}(512000)",
        ]
    lines += LOCATIONS[vcs](root, run_dir)
    if os.geteuid() == 0:
        lines += [f"User {APACHE_USER}", f"Group {APACHE_USER}"]
    conf = logs / "apache.conf"
    conf.write_text("\n".join(lines) + "\n")
    scheme = "https" if certificate is not None else "http"
    argv = [APACHE, "-f", str(conf), "-DFOREGROUND"]
    return Server("apache", argv, port, f"{scheme}://{host}:{port}", logs / "apache.log", host)


def apache_ids() -> tuple[int, int]:
    """The uid and gid of Apache's user (:data:`APACHE_USER`)."""
    import pwd

    user = pwd.getpwnam(APACHE_USER)
    return user.pw_uid, user.pw_gid


def give_tree(path: Path, ids: tuple[int, int]) -> None:
    """Make the tree at ``path`` (every entry, links themselves) the user's of ``ids``:
    a repository Apache's user is to serve and write."""
    uid, gid = ids
    os.lchown(path, uid, gid)
    for directory, dirs, names in os.walk(path):
        for name in dirs + names:
            os.lchown(os.path.join(directory, name), uid, gid)


def as_server_user(argv: list[str]) -> list[str]:
    """``argv`` run as Apache's user when vcsbench is root (its repositories are that
    user's), else as it is."""
    if os.geteuid() != 0:
        return argv
    return ["setpriv", f"--reuid={APACHE_USER}", f"--regid={APACHE_USER}", "--clear-groups", *argv]
