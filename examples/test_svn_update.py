"""`svn update` of a working copy one revision behind the repository."""

import pytest


@pytest.mark.vcs(backends=["svn-cli"], payload="submission")
def test_svn_update(vcsbench):
    change = {"src/added.py": b"print('new')\n"}

    def prepare(r):
        r.backend.create(r.repo)
        r.backend.commit(r.repo, r.files, "first", r.scratch)
        r.backend.checkout(r.repo, r.checkout, r.scratch)
        r.backend.commit(r.repo, change, "second", r.scratch)

    def run(r):
        r.sh("svn", "update", "--quiet", "--non-interactive", r.checkout)

    def verify(r):
        got = (r.checkout / "src" / "added.py").read_bytes()
        return [] if got == change["src/added.py"] else ["the update did not bring src/added.py"]

    vcsbench(run, prepare=prepare, verify=verify)
