"""`git gc` after a history of 50 commits: what packing costs on ext4 and on xfs."""

import pytest


@pytest.mark.vcs(backends=["git-cli"], fs=["ext4:size=1G", "xfs:size=1G"])
def test_gc_after_history(vcsbench):
    def prepare(r):
        r.backend.create(r.repo)
        for i in range(50):
            r.backend.commit(r.repo, {"log.txt": b"entry %d\n" % i}, f"commit {i}", r.scratch)

    def run(r):
        r.sh("git", "-C", r.repo, "gc", "--quiet")

    def verify(r):
        packed = list((r.repo / ".git" / "objects" / "pack").glob("*.pack"))
        return r.backend.verify(r.repo, {"log.txt": b"entry 49\n"}) + (
            [] if packed else ["no pack after gc"]
        )

    vcsbench(run, prepare=prepare, verify=verify)
