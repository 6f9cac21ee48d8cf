"""Every backend: create, commit and verify, through its independent reader."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from vcsbench.backends import ToolError, make_backend
from vcsbench.backends._git import git_env
from vcsbench.errors import VcsbenchError
from vcsbench.workload.payloads import load_payload

NESTED = {
    "README.txt": b"top\n",
    "src/main/app.py": b"print('hi')\n" * 50,
    "src/main/data/blob.bin": bytes(range(256)) * 40,
    "docs/empty.txt": b"",
}
ODD_NAMES = {
    "with space/a file.txt": b"spaces\n",
    "ünïcødé/日本語.txt": "non-ascii ✓\n".encode(),
    "-leading-dash.txt": b"an option to a careless tool\n",
    "-dir/x.txt": b"in a directory named like an option\n",
    "peg@revision.txt": b"svn reads @ as a peg revision\n",
    "percent%41.txt": b"a URL escape\n",
    "hash#fragment.txt": b"a URL fragment\n",
}


def scratch_of(tmp_path: Path) -> Path:
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    return scratch


def committed(backend_name: str, tmp_path: Path, files: dict[str, bytes]) -> Path:
    repo = tmp_path / "repo"
    with make_backend(backend_name) as backend:
        backend.create(repo)
        backend.commit(repo, files, "first", scratch_of(tmp_path))
    return repo


def test_study_payload_commits_and_verifies(backend_name: str, tmp_path: Path) -> None:
    files = load_payload("hello").files
    assert files == {"test.txt": b"hello world"}
    repo = committed(backend_name, tmp_path, files)
    assert make_backend(backend_name).verify(repo, files) == []


def test_nested_tree_with_binary_file_round_trips(backend_name: str, tmp_path: Path) -> None:
    repo = committed(backend_name, tmp_path, NESTED)
    assert make_backend(backend_name).verify(repo, NESTED) == []


def test_second_commit_replaces_a_file_and_keeps_the_rest(
    backend_name: str, tmp_path: Path
) -> None:
    repo = committed(backend_name, tmp_path, NESTED)
    change = {"src/main/app.py": b"print('changed')\n", "new/added.txt": b"added\n"}
    with make_backend(backend_name) as backend:
        backend.commit(repo, change, "second", scratch_of(tmp_path))
        assert backend.verify(repo, {**NESTED, **change}) == []


def test_names_users_really_use_round_trip(backend_name: str, tmp_path: Path) -> None:
    repo = committed(backend_name, tmp_path, ODD_NAMES)
    change = {"peg@revision.txt": b"changed\n", "-new@dir/100%.txt": b"new\n"}
    with make_backend(backend_name) as backend:
        assert backend.verify(repo, ODD_NAMES) == []
        backend.commit(repo, change, "second", scratch_of(tmp_path))
        assert backend.verify(repo, {**ODD_NAMES, **change}) == []


def test_verify_reports_content_that_differs(backend_name: str, tmp_path: Path) -> None:
    repo = committed(backend_name, tmp_path, {"test.txt": b"other content"})
    problems = make_backend(backend_name).verify(repo, {"test.txt": b"hello world"})
    assert problems == ["test.txt: content differs (13 bytes, expected 11)"]


def test_verify_reports_a_missing_file(backend_name: str, tmp_path: Path) -> None:
    repo = committed(backend_name, tmp_path, {"test.txt": b"hello world"})
    problems = make_backend(backend_name).verify(repo, {"gone.txt": b"x"})
    assert problems == ["gone.txt: missing"]


def test_verify_reports_a_corrupted_repository(backend_name: str, tmp_path: Path) -> None:
    repo = committed(backend_name, tmp_path, {"test.txt": b"hello world"})
    make_backend(backend_name).head_file(repo).write_text("garbage\n")
    problems = make_backend(backend_name).verify(repo, {"test.txt": b"hello world"})
    assert problems and problems[0].startswith("could not read the newest revision")


def test_checkout_materialises_the_newest_revision(backend_name: str, tmp_path: Path) -> None:
    repo = committed(backend_name, tmp_path, NESTED)
    target = tmp_path / "checkout"
    with make_backend(backend_name) as backend:
        backend.checkout(repo, target, scratch_of(tmp_path))
    for rel, data in NESTED.items():
        assert data == (target / rel).read_bytes()


def test_versions_name_the_libraries_and_tools(backend_name: str) -> None:
    versions = make_backend(backend_name).versions()
    assert versions and all(not v.startswith("unavailable") for v in versions.values())


def test_unknown_option_is_one_clear_error(backend_name: str) -> None:
    with pytest.raises(VcsbenchError, match=f"unknown option 'bogus' for backend {backend_name}"):
        make_backend(backend_name, {"bogus": "1"})


@pytest.mark.parametrize("name", ["git-pygit2", "git-cli"])
def test_empty_template_drops_the_sample_hooks(name: str, tmp_path: Path) -> None:
    with make_backend(name) as default, make_backend(name, {"template": "empty"}) as empty:
        default.create(tmp_path / "default")
        empty.create(tmp_path / "empty")
    assert list((tmp_path / "default").rglob("*.sample")) or name == "git-pygit2"
    assert list((tmp_path / "empty").rglob("*.sample")) == []


def test_git_cli_fsync_options_are_passed_to_git(tmp_path: Path) -> None:
    # Their effect on the device (a write request per flushed object) is checked by the
    # git-fsync study's test, on ext4.
    options = {"core.fsync": "loose-object", "core.fsyncMethod": "batch"}
    with make_backend("git-cli", options) as backend:
        backend.create(tmp_path / "repo")
        backend.commit(tmp_path / "repo", {"a.txt": b"a"}, "m", scratch_of(tmp_path))
        assert backend.verify(tmp_path / "repo", {"a.txt": b"a"}) == []
        argv = " ".join(backend._git("status"))  # type: ignore[attr-defined]
        assert "-c core.fsync=loose-object -c core.fsyncMethod=batch status" in argv
        assert backend.describe()["options"] == {
            "template": "",
            "core.fsync": "loose-object",
            "core.fsyncMethod": "batch",
            "objects": "loose",
            "bin": "",
            "seed-graph": "",
            "seed-pack": "",
            "remote": "",
            "rtt": "",
        }


@pytest.mark.parametrize("name", ["svn-fs", "svn-pysvn", "svn-cli"])
def test_svn_compatible_version_reaches_the_repository_format(name: str, tmp_path: Path) -> None:
    with make_backend(name, {"compatible-version": "1.8"}) as backend:
        backend.create(tmp_path / "repo")
    # fsfs format 6 is what Subversion 1.8 reads; 1.14 would write format 8.
    assert (tmp_path / "repo" / "db" / "format").read_text().startswith("6")


def test_bad_svn_fs_type_names_the_accepted_ones() -> None:
    with pytest.raises(VcsbenchError, match="fs-type='ntfs' is not known; use one of fsfs"):
        make_backend("svn-fs", {"fs-type": "ntfs"})


def test_failing_subprocess_raises_with_its_stderr(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "occupied").write_text("x")
    with pytest.raises(ToolError, match=r"svnadmin exited 1: .+"):
        make_backend("svn-cli").create(tmp_path / "repo")


def test_a_users_tree_is_a_payload(tmp_path: Path) -> None:
    from vcsbench.workload.payloads import load_payload

    tree = tmp_path / "submission"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "main.py").write_bytes(b"print(1)\n")
    (tree / "-notes @1.txt").write_bytes(b"n")
    (tree / ".git").mkdir()
    (tree / ".git" / "HEAD").write_bytes(b"ignored: VCS metadata is not content")
    payload = load_payload(f"tree:{tree}")
    assert {"src/main.py": b"print(1)\n", "-notes @1.txt": b"n"} == payload.files


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda t: (t / "link").symlink_to("/etc/passwd"), "link is a symlink"),
        (lambda t: None, "holds no files to commit"),
    ],
)
def test_a_tree_the_backends_cannot_commit_is_one_line(
    tmp_path: Path, make: object, message: str
) -> None:
    from vcsbench.workload.payloads import load_payload

    tree = tmp_path / "t"
    tree.mkdir()
    make(tree)  # type: ignore[operator]
    with pytest.raises(VcsbenchError, match=message):
        load_payload(f"tree:{tree}")


@pytest.mark.parametrize("name", ["../escape.txt", "a/../../b", "/abs.txt", "x/.git/config", ""])
def test_unsafe_payload_names_are_refused(name: str) -> None:
    from vcsbench.workload.payloads import check_names

    with pytest.raises(VcsbenchError, match="rename it or leave it out"):
        check_names({name: b"x"}, "payload p")


@pytest.mark.parametrize(
    ("name", "options"), [("git-pygit2", {"template": "empty"}), ("svn-cli", {}), ("svn-pysvn", {})]
)
def test_a_backends_temporary_directories_are_made_where_it_is_told(
    name: str, options: dict[str, str], tmp_path: Path
) -> None:
    with make_backend(name, options) as backend:
        backend.ready(tmp_path)
        made = [p.name for p in tmp_path.iterdir()]
        assert 1 == len(made) and made[0].startswith("vcsbench-")
    assert [] == list(tmp_path.iterdir())


def test_git_pygit2_reads_loose_objects_itself_and_notices_a_swapped_object(
    tmp_path: Path,
) -> None:
    from vcsbench.backends._git_loose import read_loose_objects

    files = {"a.txt": b"first\n", "d/b.txt": b"second\n"}
    repo = committed("git-pygit2", tmp_path, files)
    assert read_loose_objects(repo, sorted(files)) == files
    backend = make_backend("git-pygit2")
    objects = repo / "objects"
    loose = {p.parent.name + p.name: p for p in objects.glob("??/*")}
    # A well-formed object stored under another object's name: its SHA-1 gives it away.
    blob_a, blob_b = (git_oid(repo, f"HEAD:{rel}") for rel in sorted(files))
    loose[blob_a].write_bytes(loose[blob_b].read_bytes())
    problems = backend.verify(repo, files)
    assert problems == [
        f"could not read the newest revision: ValueError: object {blob_a} does not hash to its name"
    ]
    # Packed objects are read by git cat-file.
    subprocess.run(["git", "--git-dir", str(repo), "gc", "-q"], check=True, env=git_env())
    repo2 = committed("git-pygit2", tmp_path / "two", files)
    subprocess.run(["git", "--git-dir", str(repo2), "gc", "-q"], check=True, env=git_env())
    assert not list((repo2 / "objects").glob("??/*"))
    assert backend.verify(repo2, files) == []


def git_oid(repo: Path, spec: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(repo), "rev-parse", spec],
        capture_output=True,
        text=True,
        check=True,
        env=git_env(),
    ).stdout.strip()


def test_git_pygit2_commit_on_a_broken_head_fails_rather_than_starting_history_again(
    tmp_path: Path,
) -> None:
    """The commit reads HEAD once and takes an unreadable one for unborn only when it is:
    a branch whose ref is damaged is an error, not a new root commit."""
    repo = committed("git-pygit2", tmp_path, {"a.txt": b"first\n"})
    backend = make_backend("git-pygit2")
    backend.commit(repo, {"b.txt": b"second\n"}, "second", scratch_of(tmp_path))
    second = git_oid(repo, "HEAD")
    assert git_oid(repo, "HEAD~1")  # the second commit has the first as its parent
    for damage in ("0" * 40 + "\n", "not an id\n"):
        (repo / "refs" / "heads" / "master").write_text(damage)
        with pytest.raises(Exception, match="refs/heads/master"):
            backend.commit(repo, {"c.txt": b"third\n"}, "third", scratch_of(tmp_path))
    (repo / "refs" / "heads" / "master").write_text(second + "\n")
    assert git_oid(repo, "HEAD") == second  # nothing was committed over the damage
