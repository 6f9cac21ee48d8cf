"""Nothing lost: results written as benchmarks finish, partial benchmarks kept, resume,
checks before the first round, and results from several machines in one report."""

from __future__ import annotations

import copy
import gzip
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from helpers import DATA, RUN_ARGV, vcsbench, wait_for

from vcsbench.results import read
from vcsbench.results.layout import benchmark_part, machine_part, run_facts

# Timing- or signal-bound: run in make test's serial pass, alone on the machine.
pytestmark = pytest.mark.serial


def start_run(tmp_path: Path, out: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*RUN_ARGV, "--fs", f"dir:{tmp_path}", "--out", str(out), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_sigkill_between_benchmarks_keeps_every_finished_one(tmp_path: Path) -> None:
    out = tmp_path / "r.json.gz"
    proc = start_run(tmp_path, out, "--backends", "git-pygit2,svn-fs,git-cli", "--repos", "300")
    wait_for(proc, "[3/3]")
    proc.kill()
    proc.communicate(timeout=60)
    document = json.loads(gzip.decompress(out.read_bytes()))
    names = [benchmark_part(b)["backend"]["name"] for b in document["benchmarks"]]
    assert ["git-pygit2", "svn-fs"] == names
    assert all(300 == len(b["stats"]["data"]) for b in document["benchmarks"])


def test_a_signal_mid_benchmark_keeps_its_finished_rounds_as_partial(tmp_path: Path) -> None:
    """One stop signal here (that each of SIGINT and SIGTERM stops a run, exiting 128 plus
    it: test_safety's test_an_interrupted_run_exits_128_plus_the_signal_with_one_line)."""
    signum = signal.SIGINT
    out = tmp_path / "r.json"
    proc = start_run(tmp_path, out, "--backends", "svn-fs", "--repos", "100000")
    wait_for(proc, "rounds")
    proc.send_signal(signum)
    output, _ = proc.communicate(timeout=120)
    assert 128 + signum == proc.returncode
    (bench,) = read(out).benchmarks
    assert bench.partial and 100_000 == bench.rounds_asked
    assert 0 < bench.repos < 100_000 and bench.repos == len(bench.samples_s)
    assert f"1 benchmark(s) kept in {out}, 1 of them partial" in output
    assert "of 100,000 (partial)" in vcsbench("report", str(out)).stdout


def test_resume_runs_only_what_is_missing_or_partial(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    # The second benchmark's rounds (25 ms planted in each, 300 of them: about 9 s) last
    # more than the 5 s before its first progress line; one after the other, as benchmarks
    # of two backends run (a planted delay would interleave them by default).
    slow = "svn-fs[delay=25ms]"
    proc = start_run(
        tmp_path, out, "--backends", f"git-pygit2,{slow}", "--repos", "300", "--interleave", "off"
    )
    wait_for(proc, "[2/2]")
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=120)
    before = {b.label: b for b in read(out).benchmarks}
    assert not before["git-pygit2"].partial and before[slow].partial
    resumed = vcsbench("run", "--resume", str(out))
    assert 0 == resumed.returncode, resumed.stdout[-2000:] + resumed.stderr
    assert "1 finished benchmark(s) kept" in resumed.stdout
    progress = [line for line in resumed.stderr.splitlines() if " rounds, " in line]
    assert progress and not any("git-pygit2 create" in line for line in progress)
    after = {b.label: b for b in read(out).benchmarks}
    assert before["git-pygit2"].rounds.wall_ns == after["git-pygit2"].rounds.wall_ns
    assert not after[slow].partial and 300 == after[slow].repos
    again = vcsbench("run", "--resume", str(out))
    assert 0 == again.returncode, again.stdout[-2000:] + again.stderr
    assert f"nothing to resume: all 2 benchmark(s) of {out} finished" == again.stdout.strip()
    assert read(out).benchmarks[1].rounds.wall_ns == after[slow].rounds.wall_ns


def test_resume_refuses_results_of_another_version(tmp_path: Path) -> None:
    document = json.loads((DATA / "tiny-ext4.json").read_text())
    run_facts(document)["version"] = "0.0.1"
    other = tmp_path / "old.json"
    other.write_text(json.dumps(document))
    result = vcsbench("run", "--resume", str(other))
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert "written by vcsbench 0.0.1" in line


@pytest.mark.parametrize("out", ["/proc/vcsbench.json", "/sys/x/y.json"])
def test_an_unwritable_out_is_refused_before_any_sandbox(
    out: str, tmp_path: Path, isolated_state: Path
) -> None:
    result = vcsbench("run", "--fs", f"dir:{tmp_path}", "--repos", "1", "--out", out)
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert f"--out {out}: cannot be written" in line
    assert [] == list(tmp_path.iterdir()) and [] == list(isolated_state.iterdir())


def test_an_out_whose_first_missing_directory_is_at_the_root_is_refused(
    tmp_path: Path, isolated_state: Path
) -> None:
    """A mistyped absolute --out (``/reslts/…``) made a directory at / before; now one
    line, and nothing made (a missing directory further down is still made, and said)."""
    mistyped = Path(f"/vcsbench-mistyped-{os.getpid()}")
    out = mistyped / "r.json"
    result = vcsbench("run", "--fs", f"dir:{tmp_path}", "--repos", "1", "--out", str(out))
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert f"--out {out}: {mistyped} does not exist, and vcsbench makes no directory at /" in line
    assert not mistyped.exists() and [] == list(tmp_path.iterdir())


def test_loop_images_without_room_are_refused_up_front(tmp_path: Path) -> None:
    result = vcsbench("run", "--fs", "ext4:size=900T", "--image-dir", str(tmp_path))
    assert 2 == result.returncode
    assert "the loop images need up to 921,600.0 GiB" in result.stderr


def machine_copy(tmp_path: Path, name: str, cpu: str) -> Path:
    document = json.loads((DATA / "tiny-ext4.json").read_text())
    document = copy.deepcopy(document)
    machine_part(document)["cpu_model"] = cpu
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def test_a_report_of_three_machines_names_the_machine_of_every_row(tmp_path: Path) -> None:
    files = [machine_copy(tmp_path, f"{label}.json", f"CPU {label}") for label in ("x", "y", "z")]
    result = vcsbench("report", *map(str, files))
    assert 0 == result.returncode, result.stderr
    for label, cpu in (("A", "CPU x"), ("B", "CPU y"), ("C", "CPU z")):
        assert f"- **machine {label}**: {cpu}, 2 CPUs" in result.stdout
    lines = result.stdout.splitlines()
    header = next(line for line in lines if line.startswith("| backend"))
    column = [cell.strip() for cell in header.split("|")].index("machine")
    rows = [line for line in lines if line.startswith("| git-pygit2")]
    assert ["A", "B", "C"] == [row.split("|")[column].strip() for row in rows]
    headline = [line for line in lines if line.startswith("| create+commit | hello")]
    for label in ("A", "B", "C"):
        assert any(f"| machine {label} " in line for line in headline), headline


def test_results_in_another_unit_are_not_merged(tmp_path: Path) -> None:
    document = json.loads((DATA / "tiny-ext4.json").read_text())
    benchmark_part(document["benchmarks"][0])["metrics"]["io_write_device"]["unit"] = "KiB"
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps(document))
    result = vcsbench("report", str(DATA / "tiny-ext4.json"), str(odd))
    assert 2 == result.returncode
    assert "metrics.io_write_device: unit 'KiB' is not 'B', the unit this vcsbench reads" in (
        result.stderr
    )  # refused as the file is read, whatever reads it (once only where results merged)


def test_compare_across_machines_names_the_machine_difference(tmp_path: Path) -> None:
    other = machine_copy(tmp_path, "other.json", "Another CPU")
    result = vcsbench("compare", str(DATA / "tiny-ext4.json"), str(other))
    assert "cpu_model:" in result.stdout and "Another CPU" in result.stdout


def test_bmf_export_has_bencher_metric_formats_shape() -> None:
    result = vcsbench("export", "--format", "bmf", str(DATA / "tiny-ext4.json"))
    assert 0 == result.returncode, result.stderr
    document = json.loads(result.stdout)
    run = read(DATA / "tiny-ext4.json")
    assert {f"{b.label} {b.op} {b.payload.name} {b.fs}" for b in run.benchmarks} == set(document)
    for measures in document.values():
        for measure, value in measures.items():
            assert measure == measure.lower() and " " not in measure
            assert {"value"} <= set(value) <= {"value", "lower_value", "upper_value"}
            assert all(isinstance(v, float) for v in value.values())
    bench = run.benchmarks[0]
    latency = document[f"{bench.label} {bench.op} {bench.payload.name} {bench.fs}"]["latency"]
    assert bench.median_ms is not None
    assert bench.median_ms * 1e6 == pytest.approx(latency["value"])
    assert latency["lower_value"] <= latency["value"] <= latency["upper_value"]


def test_compare_marks_partial_benchmarks_and_warns(tmp_path: Path) -> None:
    document = json.loads((DATA / "tiny-ext4.json").read_text())
    info = benchmark_part(document["benchmarks"][0])
    info["rounds_asked"] = 1000
    cut = tmp_path / "cut.json"
    cut.write_text(json.dumps(document))
    result = vcsbench("compare", str(DATA / "tiny-ext4.json"), str(cut))
    assert "[partial: other]" in result.stdout
    assert "warning: 1 benchmark(s) were cut short by an interrupt" in result.stdout


def test_plots_of_a_benchmark_whose_every_round_failed_are_made(tmp_path: Path) -> None:
    document = json.loads((DATA / "tiny-ext4.json").read_text())
    for entry in document["benchmarks"]:
        info = benchmark_part(entry)
        info["rounds"]["ok"] = [False] * len(info["rounds"]["ok"])
        info["errors"] = info["repos"]
    failed = tmp_path / "failed.json"
    failed.write_text(json.dumps(document))
    result = vcsbench("report", str(failed), "--plots", str(tmp_path / "plots"))
    assert 0 == result.returncode, result.stderr
    assert "Traceback" not in result.stderr
    assert list((tmp_path / "plots").glob("latency-*.png"))


@pytest.mark.parametrize("name", ["r.json", "r.json.gz"])
def test_a_file_written_again_as_benchmarks_finish_reads_as_one_written_whole(
    tmp_path: Path, name: str
) -> None:
    from vcsbench.results.io import ResultWriter, write_document

    head = {"machine_info": {"node": "n"}, "vcsbench": {"failed_benchmarks": []}}
    entries = [{"name": f"b{i}", "stats": {"data": [i / 7] * 1000}} for i in range(3)]
    whole, parts = tmp_path / f"whole-{name}", tmp_path / name
    write_document({**head, "benchmarks": entries}, whole)

    def read(path: Path) -> object:
        raw = path.read_bytes()
        return json.loads(gzip.decompress(raw) if name.endswith(".gz") else raw)

    writer = ResultWriter(parts)
    writer.write([], head)
    assert read(parts) == {**head, "benchmarks": []}
    for count in range(3):  # as after each benchmark: one, two, three
        writer.write([entries[count]], head)
        assert read(parts) == {**head, "benchmarks": entries[: count + 1]}
    assert read(parts) == read(whole)
    amended = {**entries[2], "name": "b2 with its teardown"}
    writer.write([amended], {**head, "more": 1}, amend=True)
    assert read(parts) == {**head, "more": 1, "benchmarks": [*entries[:2], amended]}


def test_a_signal_after_the_last_round_keeps_the_finished_benchmark(tmp_path: Path) -> None:
    """The signal lands while the benchmark is finished (footprint, floor) or its sandbox
    torn down: both came before it was written, and lost all its rounds. (Every stop
    signal takes the same path: SIGINT's is the test above.)"""
    out = tmp_path / "r.json"
    signum = signal.SIGTERM
    proc = start_run(tmp_path, out, "--backends", "svn-fs", "--repos", "500")
    wait_for(proc, "500/500 rounds")
    proc.send_signal(signum)
    output, _ = proc.communicate(timeout=120)
    assert 128 + signum == proc.returncode
    assert out.exists(), output
    (bench,) = read(out).benchmarks
    assert not bench.partial and 500 == bench.repos == bench.repos_ok
    assert f"1 benchmark(s) kept in {out}" in output


def test_a_signal_during_the_maintenance_keeps_the_benchmark_without_the_kept_figure(
    tmp_path: Path,
) -> None:
    """The repositories go through git gc after the last round (--kept): a stop there
    costs that figure, never the rounds."""
    out = tmp_path / "r.json"
    proc = start_run(tmp_path, out, "--backends", "git-cli", "--repos", "200", "--kept", "all")
    wait_for(proc, "200/200 rounds")  # then 200 runs of git gc: over a second
    proc.send_signal(signal.SIGTERM)
    output, _ = proc.communicate(timeout=120)
    assert 128 + signal.SIGTERM == proc.returncode
    (bench,) = read(out).benchmarks
    assert 200 == bench.repos == bench.repos_ok
    kept = bench.metric("footprint_kept_allocated")
    assert None is kept.per_repo and "stopped first" in kept.reason, output
    assert bench.per_repo("footprint_allocated")  # as written: scanned before the stop


def sandbox_of(isolated_state: Path) -> str:
    """The mount point the one running sandbox recorded in its state file."""
    for _ in range(200):
        for path in isolated_state.glob("*.json"):
            state = json.loads(path.read_text())
            if state.get("mountpoint") and "mounted" in state["steps"]:
                return str(state["mountpoint"]["path"])
        time.sleep(0.05)
    raise AssertionError("no mounted sandbox recorded")


def remount_read_only(point: str) -> None:
    """Remount a sandbox read-only under a running benchmark: the kernel refuses while a
    file is open for writing there, so try in the gaps between the rounds' writes."""
    for _ in range(2000):
        done = subprocess.run(["mount", "-o", "remount,ro", point], capture_output=True)
        if done.returncode == 0:
            return
        time.sleep(0.005)
    raise AssertionError(f"{point} could not be remounted read-only: {done.stderr!r}")


def test_a_sandbox_that_turns_read_only_makes_errors_and_keeps_the_verified_rounds(
    root: None, tmp_path: Path, isolated_state: Path
) -> None:
    out = tmp_path / "r.json"
    proc = subprocess.Popen(
        [
            *RUN_ARGV,
            "--backends",
            "git-pygit2",
            "--repos",
            "100000",
            "--fs",
            "tmpfs",
            "--out",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_for(proc, "rounds")
        remount_read_only(sandbox_of(isolated_state))
    finally:
        output, _ = proc.communicate(timeout=300)
    assert 1 == proc.returncode, output[-2000:]
    assert "Traceback" not in output
    (bench,) = read(out).benchmarks
    assert 0 < bench.repos_ok == bench.verified < bench.repos < 100_000
    assert bench.errors == bench.repos - bench.repos_ok >= 64  # a whole batch, then it stopped
    assert bench.partial and "turned read-only at round" in bench.diagnosis
    assert "turned read-only at round" in output


def test_a_sandbox_out_of_inodes_is_named_so(root: None, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = subprocess.run(
        [
            *RUN_ARGV,
            "--backends",
            "git-pygit2",
            "--repos",
            "500",  # each takes about 20 inodes: the sandbox's 1,024 last 50 or so
            "--fs",
            "ext4:size=64M,mkfs=-N 1024",
            "--image-dir",
            str(tmp_path),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert 1 == result.returncode
    (bench,) = read(out).benchmarks
    assert 0 < bench.repos_ok < bench.repos and "ran out of inodes" in bench.diagnosis


def test_rounds_that_cannot_fit_in_memory_are_refused_before_anything_runs(
    root: None, isolated_state: Path
) -> None:
    """btrfs has no inode count, so nothing else bounds --repos there."""
    result = vcsbench("run", "--fs", "btrfs", "--repos", "100000000", "--backends", "git-pygit2")
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert "--repos 100,000,000 would hold about 65.2 GiB in memory" in line
    assert "rounds per benchmark" in line and [] == list(isolated_state.iterdir())


@pytest.mark.parametrize("name", ["r.json", "r.json.gz"])
def test_the_result_writer_holds_none_of_the_benchmarks_it_wrote(tmp_path: Path, name: str) -> None:
    import tracemalloc

    from vcsbench.results.io import ResultWriter

    writer = ResultWriter(tmp_path / name)
    tracemalloc.start()
    try:
        for i in range(5):
            big = {"name": f"b{i}", "rounds": {"wall_ns": list(range(200_000))}}
            writer.write([big], {"vcsbench": {"n": i}})
            del big
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 64 * 1024, f"{held:,} bytes held after writing 1,000,000 rounds"
    assert 5 == len(
        json.loads(
            tmp_path.joinpath(name).read_bytes()
            if name.endswith(".json")
            else gzip.decompress(tmp_path.joinpath(name).read_bytes())
        )["benchmarks"]
    )
