"""The conversion stage behind its executor seam: the local process pool and a
real Dask cluster (issue 11).

The cluster is a ``distributed.LocalCluster`` on 127.0.0.1: two worker processes
under nannies (which restart a worker that died), one thread each, no dashboard.
Its scheduler retries a task whose worker died once (``allowed-failures: 1``;
Dask's default is 3), so a file that kills every worker it meets costs two worker
restarts, not four.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from monkeyllm_core import Vine, init_forest
from monkeyllm_core.forest.validate import check_forest
from monkeyllm_gardener.executors import LOST_TWICE, ExecutorChoice
from monkeyllm_gardener.pipeline import Gardener
from monkeyllm_gardener.testing import isolated_env

REPO = Path(__file__).resolve().parents[2]
EXPORT = REPO / "fixtures" / "export"
VINE = [sys.executable, "-m", "monkeyllm_gardener.cli"]
# last in walk order, so every other file is ahead of it on any Dask worker (Dask
# counts a death against every task waiting on that worker, not only the one running)
DIES_ON = "zz-crash.boom"

# A command hook (a real external tool): converts a .boom file to markdown, except
# the one named DIES_ON, on which it SIGKILLs the process that ran it, the
# converting worker. Each run notes the file and that worker's pid in PIDS. It
# never kills the test or its ancestors (KEEP): a tool whose worker is already gone
# has been handed to another parent.
HOOK_TOOL = """\
import os, signal, sys
source, output = sys.argv[1], sys.argv[2]
worker = os.getppid()
with open(PIDS, "a") as pids:
    pids.write(f"{os.path.basename(source)} {worker}\\n")
if os.path.basename(source) == DIES_ON and worker not in KEEP:
    os.kill(worker, signal.SIGKILL)
with open(output, "w") as out:
    out.write("# " + os.path.basename(source) + "\\n\\nConverted by the hook in May 2026.\\n")
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    distributed = pytest.importorskip("distributed", reason="the [dask] extra (distributed) is not installed")
    import logging

    import dask
    # lost-worker-timeout: a LocalCluster drops for good a worker that is not back
    # 15 s after it died (a busy machine restarts slowly); read then, so set throughout
    with dask.config.set({"distributed.scheduler.allowed-failures": 1,
                          "distributed.deploy.lost-worker-timeout": "1 hour"}):
        local = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                         dashboard_address=None, silence_logs=logging.CRITICAL)
        try:
            yield local
        finally:
            local.close()


def dask_on(cluster: Any) -> ExecutorChoice:
    return ExecutorChoice(kind="dask", scheduler=cluster.scheduler_address)


def git(forest: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=forest, capture_output=True, text=True, check=True).stdout


def committed_bytes(forest: Path) -> dict[str, bytes]:
    """Every file of HEAD's tree, as the work tree holds it."""
    names = git(forest, "ls-tree", "-r", "-z", "--name-only", "HEAD").split("\0")
    return {name: (forest / name).read_bytes() for name in names if name}


def payload_bytes(forest: Path) -> dict[str, bytes]:
    """The files git does not hold (dataset databases, media under _assets/), the
    derived layer apart (a disposable cache whose SQLite pages hold timestamps)."""
    committed = set(committed_bytes(forest))
    out = {}
    for path in sorted(forest.rglob("*")):
        rel = path.relative_to(forest).as_posix()
        if path.is_file() and rel not in committed and not rel.startswith((".git/", "_derived/")) \
                and rel not in (".vine.lock", "_meta/gardener.yaml"):
            out[rel] = path.read_bytes()
    return out


def ancestry() -> set[int]:
    """This process and every process above it, up to pid 1."""
    pids, pid = set(), os.getpid()
    while pid > 0 and pid not in pids:
        pids.add(pid)
        stat = Path(f"/proc/{pid}/stat").read_text()
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return pids | {1}


def boom_export(tmp_path: Path, *, dies_on: str | None = DIES_ON) -> tuple[Path, Path, Path]:
    """A source of notes and .boom files (``dies_on`` kills its worker), a forest
    whose gardener.yaml routes .boom to the hook tool, and the file the tool notes
    pids in."""
    source = tmp_path / "source"
    source.mkdir()
    for i in range(5):
        (source / f"note-{i}.md").write_text(f"# Note {i}\n\nA note written in May 2026, number {i}.\n")
    (source / "fine.boom").write_text("fine\n")
    if dies_on:
        (source / dies_on).write_text("crash\n")
    pids = tmp_path / "pids"
    tool = tmp_path / "hook_tool.py"
    tool.write_text(f"PIDS = {str(pids)!r}\nDIES_ON = {dies_on!r}\nKEEP = {ancestry()!r}\n" + HOOK_TOOL)
    forest = init_forest(tmp_path / "forest", "Test forest")
    (forest / "_meta/gardener.yaml").write_text(
        json.dumps({"converters": {".boom": f'"{sys.executable}" "{tool}" "{{input}}" "{{output}}"'}}))
    return source, forest, pids


# -- the same forest whichever executor ran ------------------------------------------------
def test_forest_is_byte_identical_whichever_executor_ran(tmp_path: Path, cluster: Any) -> None:
    source = tmp_path / "export"
    shutil.copytree(EXPORT, source)  # one source path for both: passports record it
    by_pool = init_forest(tmp_path / "by-pool", "Test forest")
    by_dask = init_forest(tmp_path / "by-dask", "Test forest")

    pool_report = Gardener(by_pool).adopt(source, jobs=2)
    dask_report = Gardener(by_dask).adopt(source, executor=dask_on(cluster))

    assert json.loads(dask_report.to_json()) == json.loads(pool_report.to_json())
    assert pool_report.planted and any("broken.xlsx" in line for line in pool_report.errors)
    # the same trees, commit by commit (so the same plant order), and the same messages;
    # the commit ids differ only by their timestamps
    assert git(by_dask, "log", "--format=%T %s") == git(by_pool, "log", "--format=%T %s")
    assert committed_bytes(by_dask) == committed_bytes(by_pool)
    # the datasets a Dask worker built travelled back as bytes: the same files
    payloads = payload_bytes(by_pool)
    assert any(rel.endswith(".db") for rel in payloads) and any(rel.startswith("_assets/") or "/_assets/" in rel
                                                                for rel in payloads)
    assert payload_bytes(by_dask) == payloads
    assert not os.listdir(by_dask / "_derived" / "tmp")  # every shipped file was moved into place


# -- a worker that dies mid-file -------------------------------------------------------------
@pytest.mark.parametrize("executor", ["process", "dask"])
def test_a_worker_that_dies_mid_file_costs_that_file_only(tmp_path: Path, executor: str,
                                                         request: pytest.FixtureRequest) -> None:
    source, forest, pids = boom_export(tmp_path)
    if executor == "dask":
        report = Gardener(forest).adopt(source, executor=dask_on(request.getfixturevalue("cluster")))
    else:
        report = Gardener(forest).adopt(source, jobs=2)

    assert len(report.errors) == 1, report.errors
    assert report.errors[0].startswith(f"{DIES_ON}: worker died while converting it")
    assert sorted(report.planted) == ["fine", *[f"note-{i}" for i in range(5)]]
    # tried twice (the process pool: once more on its own; Dask: on a second worker),
    # each time by a worker process that then died, never by the writer
    runs = [line.split() for line in pids.read_text().splitlines()]
    killers = [int(pid) for name, pid in runs if name == DIES_ON]
    assert len(killers) == 2 and len(set(killers)) == 2 and os.getpid() not in killers
    assert {name for name, _ in runs} == {"fine.boom", DIES_ON}
    with Vine(forest, writable=False) as vine:
        checked = check_forest(vine)
    assert [f.line() for f in checked.findings if f.level == "error"] == []


def test_the_process_pool_plants_every_file_a_dead_worker_took_along(tmp_path: Path) -> None:
    """The file that kills its worker comes first here: the pool breaks with every
    other file in flight, and each of them is converted again and plants."""
    source, forest, pids = boom_export(tmp_path, dies_on="aa-crash.boom")
    for i in range(5, 12):
        (source / f"note-{i}.md").write_text(f"# Note {i}\n\nA note written in May 2026, number {i}.\n")
    report = Gardener(forest).adopt(source, jobs=2)
    assert report.errors == [f"aa-crash.boom: {LOST_TWICE}"]
    assert sorted(report.planted) == sorted(["fine", *[f"note-{i}" for i in range(12)]])
    assert [name for name, _ in (line.split() for line in pids.read_text().splitlines())].count("aa-crash.boom") == 2


# -- the CLI ---------------------------------------------------------------------------------
def vine(tmp_path: Path, *args: str | Path, prelude: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    """The real ``vine`` in a subprocess; ``prelude`` runs first in that interpreter."""
    code = f"{prelude}\nimport sys\nfrom monkeyllm_gardener.cli import main\nsys.exit(main(sys.argv[1:]))"
    proc = subprocess.run([sys.executable, "-c", code, *map(str, args)], env=isolated_env(tmp_path / "home", env),
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_vine_adopt_with_executor_dask_converts_on_the_cluster(tmp_path: Path, cluster: Any) -> None:
    import distributed
    source, forest, pids = boom_export(tmp_path, dies_on=None)
    proc = vine(tmp_path, "adopt", source, "--forest", forest, "--json", "--executor", "dask",
                "--scheduler", cluster.scheduler_address)
    assert proc.returncode == 0, proc.stderr
    assert sorted(json.loads(proc.stdout)["planted"]) == ["fine", *[f"note-{i}" for i in range(5)]]
    with distributed.Client(cluster.scheduler_address, set_as_default=False) as client:
        workers = set(client.run(os.getpid).values())
    hook_ran_in = {int(pid) for _, pid in (line.split() for line in pids.read_text().splitlines())}
    assert hook_ran_in and hook_ran_in <= workers  # the .boom file was converted by a cluster worker


def untouched(forest: Path) -> bool:
    return git(forest, "rev-list", "--count", "HEAD").strip() == "1" \
        and not (forest / "_meta/gardener.yaml").exists()


def test_a_missing_dask_extra_is_one_line_with_the_install_hint(tmp_path: Path) -> None:
    source, forest, _ = boom_export(tmp_path, dies_on=None)
    (forest / "_meta/gardener.yaml").unlink()
    proc = vine(tmp_path, "adopt", source, "--forest", forest, "--executor", "dask",
                "--scheduler", "tcp://127.0.0.1:8786",
                prelude="import sys; sys.modules['distributed'] = None  # as if never installed")
    assert proc.returncode == 2
    assert proc.stderr == ("error: --executor dask needs the distributed package, which is not installed "
                           '(pip install "monkeyllm[dask]")\n')
    assert untouched(forest)


@pytest.mark.parametrize("flags, says", [
    (["--executor", "dask"], "error: --executor dask needs --scheduler ADDR ("),
    (["--scheduler", "tcp://127.0.0.1:8786"], "error: --scheduler is only used with --executor dask ("),
    (["--executor", "dask", "--scheduler", "no port"], "error: --scheduler 'no port' is not a scheduler address ("),
    (["--executor", "dask", "--scheduler", "tcp://127.0.0.1:9"], "error: cannot reach the Dask scheduler at "),
])
def test_executor_flags_are_checked_before_anything_is_touched(tmp_path: Path, flags: list[str], says: str) -> None:
    pytest.importorskip("distributed", reason="the [dask] extra (distributed) is not installed")
    source, forest, _ = boom_export(tmp_path, dies_on=None)
    (forest / "_meta/gardener.yaml").unlink()
    # Dask's own connect timeout (30 s by default) bounds the wait for a scheduler that is not there
    proc = vine(tmp_path, "adopt", source, "--forest", forest, *flags, DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="1s")
    assert proc.returncode == 2
    assert proc.stderr.startswith(says) and proc.stderr.count("\n") == 1, proc.stderr
    assert untouched(forest)
