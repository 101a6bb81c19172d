"""A sync that finds nothing new runs only what it needs, and says what it always said.

Through the real `vine` CLI in a subprocess (``python -m monkeyllm_gardener.cli``,
run so that it lists ``sys.modules`` when it exits: an import log would miss what
``importlib.import_module`` loads). A no-change sync answers for its unsupported and failed
files from the plugin host's remembered answers (``_derived/gardener-host.json``)
and never builds the host; the reports are compared with a sync that had to build
it. Whatever could change those answers (a command hook, an installed plugin)
makes the next sync ask the host again.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from cli_helpers import Result, git, snapshot
from monkeyllm_core.store.packfile import LEGACY_TEMP_PREFIX, TEMP_PREFIX
from monkeyllm_gardener.config_memory import CONFIG_MEMORY_PATH, SETTLED_SECONDS

# the modules that add the other commands' arguments: a command imports its own alone
COMMAND_MODULES = ("monkeyllm_gardener.read_commands", "monkeyllm_gardener.snapshot_commands",
                   "monkeyllm_gardener.serve_commands", "monkeyllm_gardener.keys_commands",
                   "monkeyllm_gardener.ranger_commands", "monkeyllm_gardener.troop_commands",
                   "monkeyllm_gardener.canopy_commands")
# what a run that converts nothing must not load: the plugin host and its
# discovery, the converters and their readers, the worker stage, the process
# pool, a model client, the progress bar; nor the writer (the engine, git, the
# lock's host name), the node builder, the executors
NOT_FOR_A_NO_CHANGE_SYNC = ("pluggy", "importlib.metadata", "monkeyllm_plugins", "monkeyllm_gardener.host.plugin_host",
                            "monkeyllm_gardener.worker", "monkeyllm_gardener.kit.sheets", "concurrent.futures.process",
                            "multiprocessing", "openpyxl", "docx", "xlrd", "PIL", "mutagen", "openai", "rich",
                            "asyncio", "numpy", "monkeyllm_core.vine", "monkeyllm_core.store", "monkeyllm_gardener.nodes",
                            "monkeyllm_gardener.executors", "monkeyllm_gardener.command_hooks",
                            "subprocess", "socket", "ctypes", *COMMAND_MODULES)
# `vine --help` lists the commands: not the engine, not the pipeline, no command's module
NOT_FOR_HELP = ("monkeyllm_core.vine", "monkeyllm_core.read", "monkeyllm_gardener.pipeline", "yaml", "sqlite3",
                "pluggy", "rich", "asyncio", "logging", "numpy", "monkeyllm_gardener.troop", "monkeyllm_core.canopy",
                "monkeyllm_core.errors", "typing", "json", *COMMAND_MODULES)
HOST_MEMORY = "_derived/gardener-host.json"


# `vine ARGS` as `python -m monkeyllm_gardener.cli` runs it, writing the names in
# sys.modules at exit to the file named by the first argument
RUN_AND_LIST_MODULES = """
import atexit, os, runpy, sys
out = sys.argv.pop(1)
sys.path[0] = os.getcwd()  # as `python -m` has it: the same sys.path as the other commands
atexit.register(lambda: open(out, "w").write("\\n".join(sorted(sys.modules))))
runpy.run_module("monkeyllm_gardener.cli", run_name="__main__", alter_sys=True)
"""


def run_listing_modules(vine_cli: Any, tmp_path: Path, *args: Any, env: dict[str, str] | None = None,
                        ) -> tuple[Result, set[str]]:
    """Run `vine ARGS` for real; its result and every module it imported."""
    listing = tmp_path / "modules.txt"
    argv = [str(a) for a in args]
    proc = subprocess.run([sys.executable, "-c", RUN_AND_LIST_MODULES, str(listing), *argv],
                          cwd=vine_cli.cwd, env=vine_cli.env(env), capture_output=True, text=True, timeout=120)
    result = Result(args=tuple(argv), returncode=proc.returncode, stdout=proc.stdout, stderr=proc.stderr)
    assert "Traceback" not in result.stderr, result.describe()
    return result, set(listing.read_text(encoding="utf-8").split("\n"))


def loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


@pytest.fixture
def adopted(vine_cli: Any, forest: Path, rich_export: Path) -> tuple[Path, Path, dict[str, Any]]:
    """The rich export adopted: planted files, an unsupported one and a failed one."""
    report = vine_cli.adopt(rich_export, forest, expect=1).json()
    assert report["unsupported"] == ["misc/mystery.qqq: no converter for .qqq"]
    assert [line.split(":")[0] for line in report["errors"]] == ["misc/broken.json"]
    return forest, rich_export, report


def test_a_no_change_sync_loads_no_plugin_and_reports_what_building_the_host_reports(
        vine_cli: Any, adopted: tuple[Path, Path, dict[str, Any]], tmp_path: Path) -> None:
    forest, _export, _ = adopted
    before = snapshot(forest)
    remembered, modules = run_listing_modules(vine_cli, tmp_path, "sync", "--forest", forest, "--json")
    assert remembered.returncode == 1, remembered.describe()  # the failed file is listed again
    assert loaded(modules, NOT_FOR_A_NO_CHANGE_SYNC) == []
    report = remembered.json()
    assert report["planted"] == report["updated"] == [] and len(report["unchanged"]) == 7
    assert report["unsupported"] == ["misc/mystery.qqq: no converter for .qqq"]
    assert report["errors"][0].startswith("misc/broken.json: ")
    assert report["errors"][0].endswith("(unchanged since it failed: not converted again until the file changes)")

    (forest / HOST_MEMORY).unlink()  # nothing remembered: this sync builds the host and asks it
    asked, modules = run_listing_modules(vine_cli, tmp_path, "sync", "--forest", forest, "--json")
    assert {"pluggy", "monkeyllm_plugins.json_data"} <= modules
    assert asked.stdout == remembered.stdout  # the same JSON report, to the byte
    text_remembered = vine_cli("sync", "--forest", forest)
    (forest / HOST_MEMORY).unlink()
    text_asked = vine_cli("sync", "--forest", forest)
    assert text_asked.returncode == text_remembered.returncode == 1
    assert text_asked.stdout == text_remembered.stdout
    assert "unchanged (7)" in text_asked.stdout and "misc/mystery.qqq: no converter for .qqq" in text_asked.stdout
    assert snapshot(forest) == before and git(forest, "status", "--porcelain") == ""


def test_vine_help_builds_the_parser_without_the_engine(vine_cli: Any, tmp_path: Path) -> None:
    result, modules = run_listing_modules(vine_cli, tmp_path, "--help")
    assert result.returncode == 0 and "adopt" in result.stdout and "harvest" in result.stdout
    assert loaded(modules, NOT_FOR_HELP) == []


def test_a_command_hook_added_since_makes_the_unsupported_file_convert(
        vine_cli: Any, cli: Any, adopted: tuple[Path, Path, dict[str, Any]], tmp_path: Path) -> None:
    forest, _export, _ = adopted
    vine_cli.sync(forest, expect=1)  # the answers are remembered now
    tool = cli.write(tmp_path / "tools/qqq2md.py",
                     "import sys\nopen(sys.argv[2], 'w').write('# Mystery\\n\\nA riddle from March 2026.\\n')\n")
    config = forest / "_meta/gardener.yaml"
    settings = yaml.safe_load(config.read_text(encoding="utf-8"))
    settings["converters"] = {".qqq": f'"{sys.executable}" "{tool}" "{{input}}" "{{output}}"'}
    config.write_text(yaml.safe_dump(settings), encoding="utf-8")
    report = vine_cli.sync(forest, expect=1).json()
    assert report["planted"] == ["misc/mystery"] and report["unsupported"] == []


LENIENT_QQQ = """
from monkeyllm_gardener.conversion import Conversion

class Qqq:
    name = "qqq-reader"
    def convert(self, path):
        return Conversion(kind="markdown", title="Mystery", markdown="# Mystery\\n\\nA riddle from March 2026.\\n")
"""


@pytest.mark.parametrize("where", ["a new folder on the path", "the folder already on the path"])
def test_a_plugin_installed_since_is_asked_about_the_unsupported_file(
        vine_cli: Any, cli: Any, forest: Path, rich_export: Path, tmp_path: Path, where: str) -> None:
    site = tmp_path / "site"
    site.mkdir()
    env = {"PYTHONPATH": str(site)} if where == "the folder already on the path" else {}
    vine_cli.adopt(rich_export, forest, expect=1, env=env)
    assert vine_cli.sync(forest, expect=1, env=env).json()["unsupported"] == ["misc/mystery.qqq: no converter for .qqq"]
    cli.install_dists(site, {"qqq-reader": ("qqq_reader", LENIENT_QQQ, "[monkeyllm.converters]\nqqq = qqq_reader:Qqq\n")})
    report = vine_cli.sync(forest, expect=1, env={"PYTHONPATH": str(site)}).json()
    assert report["planted"] == ["misc/mystery"] and report["unsupported"] == []
    # a host with a third-party plugin is asked every time: it is never remembered
    _again, modules = run_listing_modules(vine_cli, tmp_path, "sync", "--forest", forest, "--json",
                                          env={"PYTHONPATH": str(site)})
    assert "pluggy" in modules


def test_a_settled_config_is_read_without_pyyaml_and_an_edit_is_seen_at_once(
        vine_cli: Any, adopted: tuple[Path, Path, dict[str, Any]], tmp_path: Path) -> None:
    forest, _export, _ = adopted
    memory, config = forest / CONFIG_MEMORY_PATH, forest / "_meta/gardener.yaml"
    # a config changed "just now" (here: dated in the future) is parsed and not
    # remembered: an edit in the same clock tick as the parse could keep its stat
    os.utime(config, (time.time() + 60, time.time() + 60))
    vine_cli.sync(forest, expect=1)
    assert not memory.exists()
    os.utime(config, (time.time() - 60, time.time() - 60))
    time.sleep(SETTLED_SECONDS + 0.2)  # its ctime too (which only the clock moves)
    parsed = vine_cli.sync(forest, expect=1)  # parses it, and remembers it now
    remembered, modules = run_listing_modules(vine_cli, tmp_path, "sync", "--forest", forest, "--json")
    # nor dataclasses, whose import costs more than some modules (PyYAML's passport module needs them)
    assert loaded(modules, ("yaml", "dataclasses")) == []
    assert remembered.stdout == parsed.stdout and memory.exists()

    config.write_text(config.read_text(encoding="utf-8") + "ignore:\n- '*.qqq'\n", encoding="utf-8")
    edited, modules = run_listing_modules(vine_cli, tmp_path, "sync", "--forest", forest, "--json")
    assert "yaml" in modules
    assert edited.json()["unsupported"] == [] and remembered.json()["unsupported"] != []


def test_a_config_json_cannot_carry_is_parsed_every_time(
        vine_cli: Any, adopted: tuple[Path, Path, dict[str, Any]], tmp_path: Path) -> None:
    forest, _export, _ = adopted
    config = forest / "_meta/gardener.yaml"
    # a date (not JSON) under a key nothing reads: named in the warnings, never remembered
    config.write_text(config.read_text(encoding="utf-8") + "since: 2026-01-05\n", encoding="utf-8")
    time.sleep(SETTLED_SECONDS + 0.2)
    for _ in range(2):
        report, modules = run_listing_modules(vine_cli, tmp_path, "sync", "--forest", forest, "--json")
        assert "yaml" in modules and not (forest / CONFIG_MEMORY_PATH).exists()
        assert any("unknown key 'since'" in w for w in report.json()["warnings"])


# -- the sync that opens no writer ---------------------------------------------------------
def logging_git(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose ``git`` is the real one, run through a script that logs
    each call first: the log says whether a command ran git at all."""
    folder, log = tmp_path / "logged-git", tmp_path / "git-calls.log"
    folder.mkdir(exist_ok=True)
    script = folder / "git"
    script.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{shutil.which("git")}" "$@"\n', encoding="utf-8")
    script.chmod(0o755)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}, log


def git_calls(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def lock_stat(forest: Path) -> tuple[int, int, int]:
    st = os.stat(forest / ".vine.lock")
    return st.st_ino, st.st_size, st.st_mtime_ns


def test_a_no_change_sync_takes_no_lock_runs_no_git_and_says_what_the_writer_says(
        vine_cli: Any, adopted: tuple[Path, Path, dict[str, Any]], tmp_path: Path) -> None:
    forest, _export, _ = adopted
    env, log = logging_git(tmp_path)
    vine_cli.sync(forest, expect=1, env=env)  # the memories settle
    before, lock, calls = snapshot(forest), lock_stat(forest), len(git_calls(log))
    quiet, modules = run_listing_modules(vine_cli, tmp_path, "sync", "--forest", forest, "--json", env=env)
    assert quiet.returncode == 1 and loaded(modules, NOT_FOR_A_NO_CHANGE_SYNC) == []
    assert git_calls(log)[calls:] == [] and lock_stat(forest) == lock  # the lock was never taken
    # a leftover of a killed run's conversions: only the writer's sync sweeps it, so this one opens the writer
    leftover = forest / "_derived/tmp/left-by-a-kill.db"
    leftover.parent.mkdir(parents=True, exist_ok=True)
    leftover.write_bytes(b"half a dataset")
    swept = vine_cli.sync(forest, expect=1, env=env)
    assert git_calls(log)[calls:] != [] and lock_stat(forest) != lock and not leftover.exists()
    assert swept.stdout == quiet.stdout  # the same report, to the byte
    assert snapshot(forest) == before and git(forest, "status", "--porcelain") == ""


def test_a_sync_beside_a_writer_at_work_is_refused_as_before(
        vine_cli: Any, adopted: tuple[Path, Path, dict[str, Any]]) -> None:
    from monkeyllm_core import Vine
    forest, _export, _ = adopted
    vine_cli.sync(forest, expect=1)
    with Vine(forest):  # a writer holds the lock: the catalog may be changing under a reader
        refused = vine_cli.sync(forest, expect=2)
    assert "E_LOCKED" in refused.stderr
    vine_cli.sync(forest, expect=1)


def test_a_commit_made_by_hand_is_seen_by_the_next_sync(
        vine_cli: Any, adopted: tuple[Path, Path, dict[str, Any]], tmp_path: Path) -> None:
    """HEAD moved past the catalog's commit (here: a node removed by hand and
    committed): the writer rebuilds the catalog, and the file is planted again."""
    forest, _export, _ = adopted
    env, log = logging_git(tmp_path)
    git(forest, "pack-refs", "--all")  # the branch is read from packed-refs now
    vine_cli.sync(forest, expect=1, env=env)
    calls = len(git_calls(log))
    assert vine_cli.sync(forest, expect=1, env=env).json()["planted"] == [] and git_calls(log)[calls:] == []
    git(forest, "rm", "-q", "notes/archive/old-plan.md")
    git(forest, "-c", "user.name=Ann", "-c", "user.email=ann@example.com", "commit", "-q", "-m", "removed by hand")
    report = vine_cli.sync(forest, expect=1, env=env).json()
    assert report["planted"] == ["notes/archive/old-plan"]
    assert (forest / "notes/archive/old-plan.md").is_file()


def test_a_detached_head_is_refused_by_the_writer_as_before(
        vine_cli: Any, adopted: tuple[Path, Path, dict[str, Any]]) -> None:
    forest, _export, _ = adopted
    vine_cli.sync(forest, expect=1)
    git(forest, "checkout", "-q", "--detach")
    refused = vine_cli.sync(forest, expect=2)
    assert "HEAD is detached" in refused.stderr


@pytest.mark.parametrize("prefix", [TEMP_PREFIX, LEGACY_TEMP_PREFIX])
def test_a_killed_writers_temporary_pack_is_swept_by_the_next_sync(
        vine_cli: Any, adopted: tuple[Path, Path, dict[str, Any]], prefix: str) -> None:
    """The read-only plan (writing/idle.py) knows the pack writer's temporary names,
    today's and the legacy one, and leaves such a forest to the writer."""
    forest, _export, _ = adopted
    vine_cli.sync(forest, expect=1)
    dead_pid = 4_000_000  # above any pid_max: no such process
    leftover = forest / f".git/objects/pack/{prefix}{dead_pid}_0123abcd.pack"
    leftover.write_bytes(b"PACK")
    vine_cli.sync(forest, expect=1)
    assert not leftover.exists()


def test_a_failed_file_removed_from_the_source_is_forgotten(
        vine_cli: Any, adopted: tuple[Path, Path, dict[str, Any]]) -> None:
    forest, export, _ = adopted
    vine_cli.sync(forest, expect=1)
    memory = forest / "_derived/gardener-failures.json"
    assert "broken.json" in memory.read_text(encoding="utf-8")
    (export / "misc/broken.json").unlink()
    report = vine_cli.sync(forest).json()  # nothing fails any more: exit 0
    assert report["errors"] == [] and "broken.json" not in memory.read_text(encoding="utf-8")


def test_a_deleted_catalog_is_rebuilt_by_the_next_sync(
        vine_cli: Any, adopted: tuple[Path, Path, dict[str, Any]]) -> None:
    forest, _export, _ = adopted
    first = vine_cli.sync(forest, expect=1)
    for name in ("catalog.db", "catalog.db-wal", "catalog.db-shm"):
        (forest / "_derived" / name).unlink(missing_ok=True)
    rebuilt = vine_cli.sync(forest, expect=1)
    assert rebuilt.stdout == first.stdout and (forest / "_derived/catalog.db").is_file()
