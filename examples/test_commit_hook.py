"""What a pre-commit hook costs each `git commit`: the same commit with and without one."""

import pytest

# A hook many courses use: refuse staged files over 1 MiB.
HOOK = b"""#!/bin/sh
git diff --cached --name-only -z | xargs -0 -r wc -c |
  awk '$2 != "total" && $1 > 1048576 { big = 1 } END { exit big }'
"""


@pytest.mark.vcs(backends=["git-cli"], payload="submission")
@pytest.mark.parametrize("hook", ["none", "pre-commit"])
def test_commit_hook(vcsbench, hook):
    def prepare(r):
        r.backend.create(r.repo)
        if hook != "none":
            path = r.repo / ".git" / "hooks" / hook
            path.write_bytes(HOOK)
            path.chmod(0o755)

    def run(r):
        r.backend.commit(r.repo, r.files, "submit", r.scratch)

    def verify(r):
        return r.backend.verify(r.repo, r.files)

    vcsbench(run, prepare=prepare, verify=verify, name=f"commit, hook {hook}")
