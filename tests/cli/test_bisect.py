"""``vcsbench bisect`` on a chain of variants with a known change: a delay from the third."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from helpers import CLI, planted_history_store, vcsbench, wait_for_file

CHAIN = ",".join(
    ["git-pygit2[copy=2]", "git-pygit2[copy=3]"]
    + [f"git-pygit2[copy={k},delay=20ms]" for k in (4, 5, 6)]
)


def test_bisect_finds_the_first_delayed_version_and_prints_each_step(tmp_path: Path) -> None:
    out = tmp_path / "b"
    found = vcsbench(
        "bisect", "--chain", CHAIN, "--ops", "create", "--payloads", "hello",
        "--fs", f"dir:{tmp_path}", "--repos", "120", "--out", str(out),
        "--progress", "none", "--perturbation", "off", "--kept", "none", "--by", "time",
    )  # fmt: skip
    assert found.returncode == 0, found.stdout + found.stderr
    text = found.stdout
    # a 20 ms delay on a create of a few ms: the bad version reads far past the
    # threshold, and the first delayed version is named
    assert "**git-pygit2[copy=4,delay=20ms] is the first version where it changed" in text
    steps = [line for line in text.splitlines() if line.startswith("step ")]
    # 1 + ceil(log2(4)) steps, and one more for each step measured again (a shared
    # machine can make a block read across the halfway point)
    again = sum("measured again" in line for line in steps)
    assert len(steps) == 3 + again and again <= 2, text
    first = steps[0].split()
    assert first[2] == "git-pygit2[copy=6,delay=20ms]" and float(first[3].rstrip("x")) > 1.5
    assert "the change to find" in steps[0]
    # progress on stderr: what runs, and from the second step the time left
    assert (
        "running step 1 of 3: git-pygit2[copy=6,delay=20ms] against git-pygit2[copy=2], "
        "120 rounds each\n" in found.stderr
    ), found.stderr
    assert "s a step so far, ~" in found.stderr
    answer = (out / "bisect.md").read_text()
    assert answer.startswith("**git-pygit2[copy=4,delay=20ms] is the first version where")
    made = sorted(p.name for p in out.glob("step-*.json"))
    assert made == [f"step-{k:02d}.json" for k in range(1, len(steps) + 1)], text


def test_bisect_by_counts_names_the_first_version_with_one_more_fsync(
    root: None, tmp_path: Path
) -> None:
    """One fsync planted from the second version: by the fsync family, each version one
    run (the two ends together), 1 + ceil(log2(2)) = 2 runs."""
    out = tmp_path / "b"
    chain = "git-pygit2[copy=2],git-pygit2[copy=3,syncs=1],git-pygit2[copy=4,syncs=1]"
    found = vcsbench(
        "bisect", "--chain", chain, "--ops", "commit", "--payloads", "hello",
        "--fs", f"dir:{tmp_path}", "--repos", "5", "--out", str(out), "--by", "sync_calls",
        "--counted", "3",
        "--progress", "none", "--perturbation", "off", "--kept", "none",
    )  # fmt: skip
    assert found.returncode == 0, found.stdout + found.stderr
    assert (
        "**git-pygit2[copy=3,syncs=1] is the first version where fsync-family calls per "
        "operation changed**: +1 fsync-family calls (0 → 1, in every counted round)"
    ) in found.stdout
    assert "Decided by fsync-family calls, in 2 runs." in found.stdout
    assert sorted(p.name for p in out.glob("step-*.json")) == ["step-01.json", "step-02.json"]


def test_bisect_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    cases = [
        (["--chain", "git-pygit2[copy=2]"], "two versions at least"),
        (["--chain", "git-pygit2[copy=2],git-pygit2[copy=2]"], "in the chain twice"),
        (["git-cli", "--good", "1", "--bad", "2"], "has no library releases to bisect"),
        (["--chain", "git-pygit2,git-pygit2[copy=2]", "--threshold", "x"], "--threshold 'x'"),
        (
            ["--chain", "git-pygit2,git-pygit2[copy=2]", "--repos", "10", "--by", "time"],
            "--repos '10'",
        ),
        (["--chain", "git-pygit2,git-pygit2[copy=2]", "--by", "speed"], "--by 'speed' is not"),
        ([], "bisect what"),
    ]
    for argv, said in cases:
        found = vcsbench("bisect", *argv, "--out", str(tmp_path / "o"))
        assert found.returncode == 2, (argv, found.stdout, found.stderr)
        assert said in found.stderr and len(found.stderr.strip().splitlines()) == 1, found.stderr


@pytest.mark.serial
def test_a_stop_signal_ends_the_bisection_at_its_step_with_the_steps_before_kept(
    tmp_path: Path,
) -> None:
    out = tmp_path / "b"
    proc = subprocess.Popen(
        [
            *CLI, "bisect", "--chain", CHAIN, "--ops", "create", "--payloads", "hello",
            "--fs", f"dir:{tmp_path}", "--repos", "120", "--out", str(out),
            "--progress", "none", "--perturbation", "off", "--kept", "none", "--by", "time",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # whatever this test inherited (cron, nohup), the child takes the signal as sent
        preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL),
    )  # fmt: skip
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("running step 2 of"):
            break
    else:
        raise AssertionError("step 2 never started")
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    stdout, _ = proc.communicate(timeout=120)
    assert 128 + signal.SIGTERM == proc.returncode, stdout
    assert "step 1   git-pygit2[copy=6,delay=20ms]" in stdout
    assert "bisect stopped during step 2: the steps before it are above" in stdout
    assert not (out / "bisect.md").exists()
    assert (out / "step-01.json").is_file()


INSTALL = (
    'mkdir -p "$VCSBENCH_PREFIX/bin" && cp git.sh "$VCSBENCH_PREFIX/bin/git" && '
    'chmod +x "$VCSBENCH_PREFIX/bin/git"'
)
"""The build of the checkout below: its script installed as the tool."""


def source_checkout(where: Path, slow_from: int, commits: int) -> Path:
    """A git checkout whose build installs a ``git`` that runs this machine's git; from
    commit ``slow_from`` (0 = the first) on, it sleeps 30 ms first."""
    import shutil

    real = shutil.which("git")
    assert real is not None
    repo = where / "src"
    repo.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "t")
    for k in range(commits):
        wait = "sleep 0.03\n" if k >= slow_from else ""
        (repo / "git.sh").write_text(f'#!/bin/sh\n# version {k}\n{wait}exec {real} "$@"\n')
        git("add", "git.sh")
        git("commit", "-q", "-m", f"commit {k}")
        git("tag", f"c{k}")
    return repo


def test_bisect_over_a_source_checkout_builds_each_commit_and_names_the_slow_one(
    tmp_path: Path,
) -> None:
    repo = source_checkout(tmp_path, slow_from=3, commits=5)
    out = tmp_path / "b"
    build = INSTALL
    found = vcsbench(
        "bisect", "git-cli", "--source", str(repo), "--good", "c0", "--bad", "c4",
        "--build", build, "--ops", "create", "--payloads", "hello",
        "--fs", f"dir:{tmp_path}", "--repos", "60", "--out", str(out),
        "--progress", "none", "--perturbation", "off", "--kept", "none", "--by", "time",
    )  # fmt: skip
    assert found.returncode == 0, found.stdout + found.stderr
    sha = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "c3"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert f"**{sha[:10]} is the first version where it changed**" in found.stdout
    assert f"The commit: {sha} commit 3" in found.stdout
    # the worktrees went; the installs stayed beside the results
    listed = subprocess.run(
        ["git", "-C", str(repo), "worktree", "list"], capture_output=True, text=True, check=True
    ).stdout
    assert len(listed.strip().splitlines()) == 1, listed
    assert not list((out / "builds").glob("src-*"))
    assert (out / "builds" / f"install-{sha[:12]}" / "bin" / "git").is_file()


def test_a_commit_that_does_not_build_is_skipped_and_said(tmp_path: Path) -> None:
    repo = source_checkout(tmp_path, slow_from=2, commits=4)
    # the build fails at the commit the bisection tries first between the two ends
    build = f'! grep -q "# version 2" git.sh && {INSTALL}'
    found = vcsbench(
        "bisect", "git-cli", "--source", str(repo), "--good", "c0", "--bad", "c3",
        "--build", build, "--ops", "create", "--payloads", "hello",
        "--fs", f"dir:{tmp_path}", "--repos", "60", "--out", str(tmp_path / "b"),
        "--progress", "none", "--perturbation", "off", "--kept", "none", "--by", "time",
    )  # fmt: skip
    assert found.returncode == 0, found.stdout + found.stderr
    assert "skipped: the build failed (exit 1)" in found.stdout
    assert "Between them, skipped:" in found.stdout


def hostile(repo: Path, marker: Path) -> None:
    """The checkout's own programs, each of which would leave ``marker``: hooks for every
    checkout and commit, an fsmonitor, and a smudge filter on every file."""
    hook = f"#!/bin/sh\ntouch {marker}\n"
    for name in ("post-checkout", "pre-commit", "post-commit", "reference-transaction"):
        (repo / ".git" / "hooks" / name).write_text(hook)
        (repo / ".git" / "hooks" / name).chmod(0o755)
    monitor = repo.parent / "monitor.sh"
    monitor.write_text(hook)
    monitor.chmod(0o755)
    for key, value in (
        ("core.fsmonitor", str(monitor)),
        ("filter.mark.smudge", f"sh -c 'touch {marker}; cat'"),
        ("filter.mark.required", "true"),
    ):
        subprocess.run(["git", "-C", str(repo), "config", key, value], check=True)
    (repo / ".git" / "info" / "attributes").write_text("* filter=mark\n")


def test_a_source_checkouts_own_programs_never_run(tmp_path: Path) -> None:
    """Hooks, an fsmonitor and a filter configured in the checkout: the commits are read
    as data (a clone sharing its objects, nothing of the checkout's run), built, and the
    checkout keeps no worktree of ours."""
    repo = source_checkout(tmp_path, slow_from=1, commits=2)
    marker = tmp_path / "ran"
    hostile(repo, marker)
    out = tmp_path / "b"
    found = vcsbench(
        "bisect", "git-cli", "--source", str(repo), "--good", "c0", "--bad", "c1",
        "--build", INSTALL, "--ops", "create", "--payloads", "hello",
        "--fs", f"dir:{tmp_path}", "--repos", "60", "--out", str(out),
        "--progress", "none", "--perturbation", "off", "--kept", "none", "--by", "time",
    )  # fmt: skip
    assert found.returncode == 0, found.stdout + found.stderr
    assert not marker.exists()
    assert not (repo / ".git" / "worktrees").exists()
    assert [] == list((out / "builds").glob("vcsbench-*"))


@pytest.mark.serial
def test_a_sigkill_during_a_build_leaves_nothing_cleanup_cannot_remove(
    tmp_path: Path, isolated_state: Path
) -> None:
    """SIGKILL while a commit builds (the build sleeping): the checkout has nothing of
    the bisection registered, and ``vcsbench cleanup`` removes its trees and ends the
    build; the installs directory stays."""
    repo = source_checkout(tmp_path, slow_from=1, commits=2)
    flag = tmp_path / "building"
    out = tmp_path / "b"
    proc = subprocess.Popen(
        [*CLI, "bisect", "git-cli", "--source", str(repo), "--good", "c0", "--bad", "c1",
         "--build", f"touch {flag}; sleep 600", "--ops", "create", "--payloads", "hello",
         "--fs", f"dir:{tmp_path}", "--repos", "60", "--out", str(out), "--progress", "none",
         "--perturbation", "off", "--kept", "none"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_for_file(flag)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert list((out / "builds").glob("vcsbench-*/src-*"))
    assert not (repo / ".git" / "worktrees").exists()
    cleaned = vcsbench("cleanup")
    assert cleaned.returncode == 0, cleaned.stderr
    assert [] == list((out / "builds").glob("vcsbench-*"))
    assert subprocess.run(["pgrep", "-f", f"touch {flag}; sleep 600"]).returncode != 0


def test_a_revision_that_git_would_read_as_an_option_is_refused(tmp_path: Path) -> None:
    repo = source_checkout(tmp_path, slow_from=1, commits=2)
    written = tmp_path / "written"
    found = vcsbench(
        "bisect", "git-cli", "--source", str(repo), f"--good=--output={written}",
        "--bad", "c1", "--build", INSTALL, "--fs", f"dir:{tmp_path}", "--out", str(tmp_path / "b"),
    )  # fmt: skip
    assert found.returncode == 2, found.stdout + found.stderr
    (line,) = found.stderr.strip().splitlines()
    assert "--good '--output=" in line and "would read one beginning with - as an option" in line
    assert not list(tmp_path.glob("written*"))


def test_bisect_and_history_never_write_through_a_symlink(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "link"
    link.symlink_to(elsewhere)
    found = vcsbench(
        "bisect", "--chain", CHAIN, "--ops", "create", "--payloads", "hello",
        "--fs", f"dir:{tmp_path}", "--repos", "60", "--out", str(link),
    )  # fmt: skip
    assert found.returncode == 2, found.stdout + found.stderr
    (line,) = found.stderr.strip().splitlines()
    assert f"--out {link}: is a symlink" in line
    store = planted_history_store(tmp_path)
    a_file = tmp_path / "a-file"
    a_file.write_text("mine")
    for target, said in ((link, "is a symlink"), (a_file, "is not a directory")):
        shown = vcsbench("history", "--store", str(store), "--html", str(target))
        assert shown.returncode == 2, shown.stdout + shown.stderr
        (line,) = shown.stderr.strip().splitlines()
        assert f"--html {target}: {said}" in line
    assert [] == list(elsewhere.iterdir())
    assert "mine" == a_file.read_text()
