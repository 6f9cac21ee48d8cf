"""Result files are data from anywhere: every reader is bounded, every bad value is one line
naming it, and nothing in a file runs as markup in a report or as a command.

Each hostile file here is a real result file (``tests/data``) with one thing changed.
"""

from __future__ import annotations

import gzip
import json
import re
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from helpers import DATA, run_args, vcsbench

from vcsbench.errors import VcsbenchError
from vcsbench.results.bounded import CHUNK, read_bytes
from vcsbench.results.layout import benchmark_part, run_facts

COMMANDS = (("report",), ("compare",), ("export",))


def argv_for(command: tuple[str, ...], path: Path) -> list[str]:
    """``command`` reading ``path`` (compare: as the other run against a good base)."""
    if command == ("compare",):
        return ["compare", str(DATA / "tiny-ext4.json"), str(path)]
    return [*command, str(path)]


def tiny() -> dict[str, Any]:
    document: dict[str, Any] = json.loads((DATA / "tiny-ext4.json").read_text())
    return document


def first(document: dict[str, Any]) -> dict[str, Any]:
    info: dict[str, Any] = benchmark_part(document["benchmarks"][0])
    return info


def write(path: Path, document: object) -> Path:
    path.write_text(json.dumps(document))
    return path


def one_line(path: Path, message: str) -> None:
    """Every reading command refuses ``path`` in one line holding ``message``, exit 2."""
    for command in COMMANDS:
        argv = argv_for(command, path)
        result = vcsbench(*argv)
        assert 2 == result.returncode, (argv, result.stdout[-300:])
        (line,) = result.stderr.strip().splitlines()
        assert message in line, line
        assert "Traceback" not in result.stderr


def test_a_gzip_bomb_stops_at_the_limit_with_memory_bounded_by_it(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.json.gz"
    limit = 8 << 20
    bomb.write_bytes(gzip.compress(b"[" + b" " * (256 << 20) + b"]", 9))
    assert bomb.stat().st_size < 300_000
    tracemalloc.start()
    try:
        with pytest.raises(VcsbenchError) as caught:
            read_bytes(bomb, limit)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "expands to more than 8 MiB of JSON" in str(caught.value)
    assert "VCSBENCH_READ_LIMIT=" in str(caught.value)
    assert peak < limit + 4 * CHUNK, f"peak {peak:,} B for a limit of {limit:,} B"


def test_the_read_limit_is_named_in_the_one_line_of_every_command(tmp_path: Path) -> None:
    big = write(tmp_path / "big.json", tiny())
    for command in COMMANDS:
        result = vcsbench(*argv_for(command, big), env={"VCSBENCH_READ_LIMIT": "1K"})
        assert 2 == result.returncode
        (line,) = result.stderr.strip().splitlines()
        assert "holds more than" in line and "VCSBENCH_READ_LIMIT" in line


def test_a_bad_read_limit_is_one_line() -> None:
    result = vcsbench("report", str(DATA / "tiny-ext4.json"), env={"VCSBENCH_READ_LIMIT": "lots"})
    assert 2 == result.returncode
    assert "VCSBENCH_READ_LIMIT='lots' is not a size like 512M or 4G" in result.stderr


def gzipped(tmp_path: Path) -> bytes:
    return gzip.compress((DATA / "tiny-ext4.json").read_bytes(), 6)


def test_a_bit_flipped_gzip_is_named_damaged(tmp_path: Path) -> None:
    data = bytearray(gzipped(tmp_path))
    data[len(data) // 2] ^= 0xFF
    path = tmp_path / "flipped.json.gz"
    path.write_bytes(bytes(data))
    one_line(path, "is a damaged gzip file")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("wall_ns", 10**400, "rounds.wall_ns[0] is 100000000000… (401 digits), beyond the 1e+18"),
        ("wall_ns", 10**19, "rounds.wall_ns[0] is 100000000000… (20 digits), beyond the 1e+18"),
        ("cpu", 1e308, "rounds.values.cpu[0] is 1e+308, beyond the 1e+18 a figure may be"),
    ],
)
def test_a_figure_beyond_any_run_is_one_line_in_every_reader(
    tmp_path: Path, field: str, value: float, message: str
) -> None:
    """A wall time past float's range (an int JSON holds whole), or a CPU of 1e308 (which
    turns into infinity once summed): one line naming the field, never OverflowError."""
    document = tiny()
    rounds = first(document)["rounds"]
    (rounds["wall_ns"] if field == "wall_ns" else rounds["values"][field])[0] = value
    one_line(write(tmp_path / "big.json", document), message)


def test_a_total_that_is_not_its_rounds_sum_is_refused(tmp_path: Path) -> None:
    """The gate reads a metric's total, the tables its rounds: a file whose CPU total is
    ten times its rounds' sum is refused, naming both."""
    document = tiny()
    cpu = first(document)["metrics"]["cpu"]
    cpu["total"] *= 10
    one_line(
        write(tmp_path / "total.json", document),
        "metrics.cpu.total is 0.10693, but its rounds sum to 0.010693",
    )


def test_a_truncated_gzip_is_named_truncated(tmp_path: Path) -> None:
    path = tmp_path / "cut.json.gz"
    path.write_bytes(gzipped(tmp_path)[:2000])
    one_line(path, "is a truncated gzip file")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_wall_time_that_is_not_a_finite_number_is_one_line_naming_it(
    tmp_path: Path, constant: str
) -> None:
    text = json.dumps(tiny())
    marker = '"wall_ns": ['
    at = text.index(marker) + len(marker)
    end = text.index(",", at)
    path = tmp_path / "nan.json"
    path.write_text(text[:at] + constant + text[end:])
    one_line(path, "benchmarks[0].extra_info.vcsbench.rounds.wall_ns[0] is")
    one_line(path, "result files hold finite numbers only")


def test_a_negative_wall_time_is_refused_so_no_gate_can_pass_on_it(tmp_path: Path) -> None:
    document = tiny()
    rounds = first(document)["rounds"]
    rounds["wall_ns"] = [-w for w in rounds["wall_ns"]]
    path = write(tmp_path / "negative.json", document)
    one_line(path, "rounds.wall_ns[0] is -")
    one_line(path, "expected 0 or more")
    gate = vcsbench("compare", str(DATA / "tiny-ext4.json"), str(path), "--fail-on", "time:10%")
    assert 2 == gate.returncode and "faster" not in gate.stdout


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("repos", -3, "vcsbench.repos is -3"),
        ("errors", -1, "vcsbench.errors is -1"),
        ("metrics", {"wall": {"unit": "s", "total": -1.0, "per_repo": 1}}, "metrics.wall.total"),
    ],
)
def test_negative_counts_and_times_are_refused_naming_the_field(
    tmp_path: Path, field: str, value: object, named: str
) -> None:
    document = tiny()
    first(document)[field] = value
    one_line(write(tmp_path / "bad.json", document), named)


def test_a_figure_that_can_be_negative_is_read(tmp_path: Path) -> None:
    document = tiny()
    metrics = first(document)["metrics"]
    metrics["fs_used_delta"] = {"unit": "B", "total": -4096.0, "per_repo": -341.3}
    path = write(tmp_path / "shrunk.json", document)
    result = vcsbench("report", str(path))
    assert 0 == result.returncode, result.stderr


def test_nesting_past_the_interpreters_limit_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    one_line(path, "is nested too deeply to be a result file")


def test_a_terminal_escape_in_a_name_is_refused(tmp_path: Path) -> None:
    document = tiny()
    first(document)["backend"]["variant"] = "git\x1b]0;owned\x07"
    one_line(write(tmp_path / "escape.json", document), "holds a control character ('\\\\u001b'")


HOSTILE = "<script>alert(1)</script>|x"


def hostile(tmp_path: Path) -> Path:
    document = tiny()
    for entry in document["benchmarks"]:
        info = benchmark_part(entry)
        info["backend"]["variant"] = HOSTILE + info["backend"]["name"]
        info["op"] = "<img src=x onerror=alert(2)>"
    return write(tmp_path / "hostile.json", document)


def test_names_from_a_file_never_run_as_html(tmp_path: Path) -> None:
    result = vcsbench("report", str(hostile(tmp_path)), "--format", "html")
    assert 0 == result.returncode, result.stderr
    page = result.stdout
    tags = re.findall(r"<(script|img)\b", page)
    assert ["script"] == tags, "only vcsbench's own sorting script"
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 6


def test_names_from_a_file_never_break_a_markdown_table(tmp_path: Path) -> None:
    result = vcsbench("report", str(hostile(tmp_path)))
    assert 0 == result.returncode, result.stderr
    for table in re.split(r"\n\s*\n", result.stdout):
        rows = [line for line in table.splitlines() if line.startswith("|")]
        if not rows:
            continue
        columns = {len(re.findall(r"(?<!\\)\|", row)) for row in rows}
        assert 1 == len(columns), table
    assert "<script>" not in result.stdout and "<img" not in result.stdout


def test_export_writes_json_that_strict_readers_take() -> None:
    result = vcsbench("export", str(DATA / "tiny-ext4.json"), str(DATA / "tiny-tmpfs.json"))
    assert 0 == result.returncode, result.stderr

    def refuse(name: str) -> None:
        raise AssertionError(f"export wrote {name}, which is not JSON")

    document = json.loads(result.stdout, parse_constant=refuse)
    assert 4 == len(document)


def test_a_failed_run_leaves_an_earlier_gzip_result_untouched_and_says_why(
    root: None, tmp_path: Path
) -> None:
    out = tmp_path / "earlier.json.gz"
    out.write_bytes(gzipped(tmp_path))
    before = out.read_bytes()
    result = vcsbench(
        *run_args("2"),
        "--fs",
        "ext4:size=64K",
        "--image-dir",
        str(tmp_path),
        "--out",
        str(out),
        "--progress",
        "none",
    )
    assert 0 != result.returncode
    assert "Traceback" not in result.stdout + result.stderr
    assert "Filesystem too small for a journal" in result.stdout
    assert before == out.read_bytes()


def finished_run(tmp_path: Path) -> Path:
    """A real two-benchmark result of 'vcsbench run', its second benchmark made partial
    (so that --resume runs it again)."""
    out = tmp_path / "run.json"
    result = vcsbench(
        *run_args("3", ops="create,create+commit"),
        "--fs",
        f"dir:{tmp_path}",
        "--out",
        str(out),
        "--progress",
        "none",
    )
    assert 0 == result.returncode, result.stdout[-1500:] + result.stderr
    document = json.loads(out.read_text())
    info = benchmark_part(document["benchmarks"][1])
    info["rounds_asked"], info["partial"] = 10, True
    return write(out, document)


EVIL_PLUGIN = """
from pathlib import Path
Path(__file__).with_name("imported").write_text("the plugin ran")
"""


def test_resume_never_hands_a_recorded_command_to_pytest(tmp_path: Path) -> None:
    out = finished_run(tmp_path)
    (tmp_path / "evilplug.py").write_text(EVIL_PLUGIN)
    (tmp_path / "evil.ini").write_text("[pytest]\naddopts = -p evilplug\n")
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep").write_text("mine")
    document = json.loads(out.read_text())
    run_facts(document)["command"] += (
        f" -- -p evilplug -c {tmp_path / 'evil.ini'} --basetemp={victim}"
    )
    write(out, document)
    result = vcsbench("run", "--resume", str(out), env={"PYTHONPATH": str(tmp_path)})
    assert 0 == result.returncode, result.stdout[-1500:] + result.stderr
    assert "1 finished benchmark(s) kept" in result.stdout
    assert not (tmp_path / "imported").exists()
    assert "mine" == (victim / "keep").read_text()
    assert "evil" not in result.stdout


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"pytest_args": ["-p", "evilplug"]}, "'pytest_args', which is not a vcsbench option"),
        ({"repos": 3}, "its recorded repos is not a text value"),
        ({"backends": "git-pygit2;rm -rf /"}, "unknown backend 'git-pygit2;rm -rf /'"),
        ({"backend_option": "git-cli:x=1"}, "recorded backend_option is not a list"),
    ],
)
def test_resume_takes_only_vcsbench_options_each_checked_as_typed(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    out = finished_run(tmp_path)
    document = json.loads(out.read_text())
    run_facts(document)["selection"].update(change)
    write(out, document)
    result = vcsbench("run", "--resume", str(out))
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert message in line


def test_resume_never_runs_a_command_a_result_file_records(tmp_path: Path) -> None:
    out = finished_run(tmp_path)
    document = json.loads(out.read_text())
    run_facts(document)["selection"]["ops"] = f"cmd[run=touch {tmp_path / 'ran'}]"
    write(out, document)
    result = vcsbench("run", "--resume", str(out))
    assert 2 == result.returncode
    (line,) = result.stderr.strip().splitlines()
    assert "a command is never run from a result file" in line
    assert not (tmp_path / "ran").exists()


MARKING_TOOL = '#!/bin/sh\ntouch {marker}\nexec /usr/bin/{name} "$@"\n'


def marking_tools(directory: Path, marker: Path) -> Path:
    """A directory of git and svn tools that each leave ``marker`` when run."""
    directory.mkdir()
    for name in ("git", "svnadmin", "svnmucc", "svn", "svnlook"):
        tool = directory / name
        tool.write_text(MARKING_TOOL.format(marker=marker, name=name))
        tool.chmod(0o755)
    return directory


def marking_template(directory: Path, marker: Path) -> Path:
    """A git template whose hooks leave ``marker`` when a commit runs them."""
    hooks = directory / "hooks"
    hooks.mkdir(parents=True)
    for name in ("pre-commit", "post-commit", "post-checkout"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (hooks / name).chmod(0o755)
    return directory


@pytest.mark.parametrize(
    ("dest", "value", "named"),
    [
        ("backends", "git-cli[bin={tools}]", "git-cli[bin={tools}]: bin={tools}"),
        ("backends", "svn-cli[bin={tools}]", "svn-cli[bin={tools}]: bin={tools}"),
        ("backends", "git-cli[template={template}]", "template={template}"),
        ("backends", "git-pygit2[version=1.15.1]", "version=1.15.1"),
        ("backend_option", ["git-cli:bin={tools}"], "git-cli:bin={tools}"),
        ("fs", "btrfs:mkfs=-f -L planted", "mkfs=-f -L planted"),
        ("fs", "ext4:mount=noatime", "mount=noatime"),
        ("image_dir", "{tmp}", "{tmp}"),
    ],
)
def test_resume_never_takes_a_program_or_a_place_from_a_result_file(
    tmp_path: Path, dest: str, value: str | list[str], named: str
) -> None:
    """A recorded selection is values: a program, a directory of programs or hooks, a
    release to install, mkfs or mount arguments and an image directory are refused in one
    line that names them and says to give them again; nothing of theirs runs."""
    out = finished_run(tmp_path)
    marker = tmp_path / "ran"
    places = {
        "tools": marking_tools(tmp_path / "tools", marker),
        "template": marking_template(tmp_path / "template", marker),
        "marker": marker,
        "tmp": tmp_path,
    }
    document = json.loads(out.read_text())
    recorded = run_facts(document)["selection"]
    if isinstance(value, list):
        recorded[dest] = [v.format(**places) for v in value]
        if dest == "backend_option":
            recorded["backends"] = "git-cli"
    else:
        recorded[dest] = value.format(**places)
    write(out, document)
    result = vcsbench("run", "--resume", str(out))
    assert 2 == result.returncode, result.stdout[-1500:]
    (line,) = result.stderr.strip().splitlines()
    flag = "--" + dest.replace("_", "-")
    assert f"its recorded {flag} names a program, a place or a release" in line
    assert named.format(**places) in line
    assert f"give {flag}" in line
    assert not marker.exists()
    assert [] == list(tmp_path.glob("vcsbench-*.img"))


def test_resume_runs_the_program_the_command_line_names_again(tmp_path: Path) -> None:
    """``bin=DIR`` recorded and given again on the command line, the same: the resume runs
    it; given otherwise: refused, a resume runs the selection it recorded."""
    out = finished_run(tmp_path)
    marker = tmp_path / "ran"
    tools = marking_tools(tmp_path / "tools", marker)
    document = json.loads(out.read_text())
    run_facts(document)["selection"]["backends"] = f"git-cli[bin={tools}]"
    write(out, document)
    other = vcsbench("run", "--resume", str(out), "--backends", "git-cli")
    assert 2 == other.returncode
    assert f"--backends git-cli is not the recorded 'git-cli[bin={tools}]'" in other.stderr
    assert not marker.exists()
    again = vcsbench("run", "--resume", str(out), "--backends", f"git-cli[bin={tools}]")
    assert 0 == again.returncode, again.stdout[-1500:] + again.stderr
    assert marker.exists()


def test_resume_refuses_results_that_vcsbench_run_did_not_write(tmp_path: Path) -> None:
    out = finished_run(tmp_path)
    document = json.loads(out.read_text())
    run_facts(document)["door"] = "pytest"
    write(out, document)
    result = vcsbench("run", "--resume", str(out))
    assert 2 == result.returncode
    assert "not written by 'vcsbench run' (by pytest)" in result.stderr


def test_the_harness_record_reads_back_typed_and_keeps_keys_it_does_not_know(
    tmp_path: Path,
) -> None:
    """A benchmark's harness record is read into its typed model and written back the same,
    an interleaved member's blocks checked as numbers; a key of another version is kept."""
    from vcsbench.results import read

    document = tiny()
    harness = first(document)["harness"]
    harness["interleaved"] = {
        "variants": ["a", "b"], "blocks": 2, "rounds": [[0, 6], [6, 12]], "position": [0, 1],
        "median_ms": [0.5, None], "order_seed": 7, "cpu": 1, "process": "p", "method": "m",
    }  # fmt: skip
    harness["from_a_later_version"] = {"kept": True}
    bench = read(write(tmp_path / "h.json", document)).benchmarks[0]
    assert bench.harness.interleaved is not None
    assert (0.5, None) == bench.harness.interleaved.median_ms
    assert ((0, 6), (6, 12)) == bench.harness.interleaved.rounds
    assert bench.harness.ops_wall_s == harness["ops_wall_s"]
    again = bench.to_json()["harness"]
    assert harness["interleaved"] == again["interleaved"]
    assert {"kept": True} == again["from_a_later_version"]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (
            "interleaved",
            {"median_ms": "fast"},
            "harness.interleaved.median_ms is str, expected list",
        ),
        ("interleaved", {"median_ms": [True]}, "harness.interleaved.median_ms[] is a boolean"),
        ("server", ["apache"], "harness.server is list, expected dict"),
        ("ops_wall_s", -1, "harness.ops_wall_s is -1, expected 0 or more"),
    ],
)
def test_a_harness_record_of_the_wrong_shape_is_one_line(
    tmp_path: Path, field: str, value: object, message: str
) -> None:
    document = tiny()
    first(document)["harness"][field] = value
    one_line(write(tmp_path / "bad.json", document), message)


def test_a_unit_the_reader_does_not_read_is_refused_naming_it(tmp_path: Path) -> None:
    """A figure in another unit would be read as if it were in vcsbench's own (a
    bytes figure written in KiB reads 1,024 times too small)."""
    doc = tiny()
    name = next(iter(first(doc)["metrics"]))
    unit = first(doc)["metrics"][name]["unit"]
    first(doc)["metrics"][name]["unit"] = "furlongs"
    one_line(write(tmp_path / "unit.json", doc), f"unit 'furlongs' is not {unit!r}")
    doc = tiny()
    first(doc)["rounds"]["unit"]["wall_ns"] = "ms"
    one_line(write(tmp_path / "wall.json", doc), "rounds.unit.wall_ns: unit 'ms' is not 'ns'")


def test_a_count_of_rounds_the_file_does_not_record_is_refused(tmp_path: Path) -> None:
    doc = tiny()
    recorded = len(first(doc)["rounds"]["wall_ns"])
    first(doc)["repos"] = 10**15
    one_line(
        write(tmp_path / "repos.json", doc),
        f"repos: 1,000,000,000,000,000 rounds, but {recorded:,} are recorded",
    )


def test_two_results_of_one_payload_name_with_other_files_say_so(tmp_path: Path) -> None:
    """The same name, another SHA-256 of its files (a tree: payload edited between two
    runs): compare names the difference, never "the environments do not differ"."""
    doc = tiny()
    base = write(tmp_path / "base.json", doc)
    for bench in doc["benchmarks"]:
        benchmark_part(bench)["payload"]["sha256"] = "f" * 64
    other = write(tmp_path / "other.json", doc)
    result = vcsbench("compare", str(base), str(other))
    assert "payload content: hello sha256 e7d6c6479d63  →  hello sha256 ffffffffffff" in (
        result.stdout
    ), result.stdout[:2000]
    assert "do not differ" not in result.stdout
    report = vcsbench("report", str(base), str(other))
    assert (
        "hello: 2 different contents under this one name (sha256 e7d6c6479d63, ffffffffffff)"
    ) in report.stdout, report.stdout[-2000:]


@pytest.mark.parametrize(
    ("arrivals", "says"),
    [
        (None, "sessions arrive on a fixed schedule"),  # a file from before --arrivals
        ("poisson:7", "at Poisson times (exponential gaps at the step's rate, seed 7)"),
        ("poisson:x", "arrivals: 'poisson:x' is not fixed, poisson or poisson:SEED"),
    ],
)
def test_a_loads_arrivals_are_read_once_and_said(
    arrivals: str | None, says: str, tmp_path: Path
) -> None:
    """The open loop's arrivals as the result keeps them: read into kind and seed when the
    file is read (a value that is neither refused in one line), said by the report."""
    document = json.loads(gzip.decompress(REFERENCE_OPEN.read_bytes()))
    document["vcsbench_load"]["arrivals"] = arrivals
    path = tmp_path / "open.json"
    path.write_text(json.dumps(document))
    result = vcsbench("report", str(path), "--format", "md")
    said = " ".join((result.stdout + result.stderr).split())
    assert says in said, said[:400]
    assert (result.returncode == 0) == (arrivals != "poisson:x")


REFERENCE_OPEN = DATA.parent.parent / "results" / "reference" / "markus2011-open.json.gz"


def test_a_variant_alone_is_one_difference_not_its_versions_and_options(tmp_path: Path) -> None:
    """``git-pygit2[delay=900us]`` against ``git-pygit2``: the same versions and options
    under another label -- one thing changed (the variant), not two; a version that
    differs is still named."""
    doc = tiny()
    base = write(tmp_path / "base.json", doc)
    for bench in doc["benchmarks"]:
        backend = benchmark_part(bench)["backend"]
        backend["variant"] = f"{backend['name']}[delay=900us]"
        bench["params"]["backend"] = backend["variant"]
    other = write(tmp_path / "other.json", doc)
    says = vcsbench("compare", str(base), str(other)).stdout
    assert (
        "backend variants: git-pygit2; svn-fs  →  git-pygit2[delay=900us]; svn-fs[delay=900us]"
    ) in says, says[:2000]
    assert "backend versions" not in says and "backend options" not in says, says[:2000]
    assert "things changed at once" not in says
    first(doc)["backend"]["versions"]["pygit2"] = "1.15.1"
    newer = vcsbench("compare", str(base), str(write(tmp_path / "o2.json", doc))).stdout
    assert "backend versions: git-pygit2: " in newer, newer[:2000]
    assert "pygit2 1.21.0" in newer and "pygit2 1.15.1" in newer
    assert "backend variants" not in newer
