"""`vine snapshot create | restore` end to end: the real CLI on a forest it adopted,
what a person reads, what --json prints, and one-line errors with exit 2."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_helpers import git_status, snapshot

DEFAULT_NAME = re.compile(r"forest-\d{4}-\d{2}-\d{2}-\d{6}\.bundle")


@pytest.fixture
def adopted(vine_cli, forest: Path, rich_export: Path) -> Path:
    vine_cli.adopt(rich_export, forest, expect=1)  # misc/broken.json fails, by design
    return forest


def test_create_writes_a_dated_bundle_and_its_sidecar_in_the_current_folder(vine_cli, adopted):
    result = vine_cli("snapshot", "create", "--forest", adopted, "--with-payloads")
    assert result.returncode == 0, result.describe()
    written = sorted(path.name for path in vine_cli.cwd.iterdir())
    assert len(written) == 2 and DEFAULT_NAME.fullmatch(written[0]), written
    assert written[1] == written[0] + ".payloads.tar"
    lines = result.stdout.splitlines()
    assert re.fullmatch(rf"snapshot: {re.escape(str(vine_cli.cwd / written[0]))} \(\d+\.\d KiB; \d+ commit\(s\), "
                        r"1 ref\(s\), HEAD [0-9a-f]{12} on master\)", lines[0]), lines
    assert re.fullmatch(r"payloads: 5 payload\(s\), \d+\.\d KiB, each checked against its payload_hash: .*"
                        r"\.bundle\.payloads\.tar", lines[1]), lines
    assert len(lines) == 2


def test_create_run_inside_the_forest_writes_beside_it(vine_cli, adopted):
    result = vine_cli("snapshot", "create", cwd=adopted)
    assert result.returncode == 0, result.describe()
    beside = [path.name for path in adopted.parent.iterdir() if path.suffix == ".bundle"]
    assert len(beside) == 1 and DEFAULT_NAME.fullmatch(beside[0]), beside
    assert git_status(adopted) == ""  # the backup is no file of the forest's
    assert "payloads: not carried" in result.stdout


def test_restore_prints_what_it_restored_and_the_forest_validates(vine_cli, adopted, tmp_path):
    made = vine_cli("snapshot", "create", tmp_path / "brain.bundle", "--forest", adopted, "--with-payloads", "--json")
    assert made.returncode == 0, made.describe()
    created = made.json()
    assert created["payloads"] == 5 and created["sidecar"] == str(tmp_path / "brain.bundle.payloads.tar")

    result = vine_cli("snapshot", "restore", tmp_path / "brain.bundle", "--forest", tmp_path / "restored",
                      "--payloads", created["sidecar"])

    assert result.returncode == 0, result.describe()
    assert result.stdout.splitlines() == [
        f"restored: {tmp_path / 'restored'} (branch master, HEAD {created['commit'][:12]}, 1 ref(s))",
        "payloads: 5 put in place, each matching its passport's payload_hash",
        "validate: 12 node(s), 0 error(s), 0 warning(s)"]
    vine_cli.assert_consistent(tmp_path / "restored")
    answer = vine_cli("query", "data/invoices", "SELECT SUM(total_usd) FROM invoices",
                      "--forest", tmp_path / "restored")
    assert json.loads(answer.stdout)["rows"] == [[17420.5]]
    assert snapshot(tmp_path / "restored")["data/invoices.db"] == snapshot(adopted)["data/invoices.db"]


def test_restore_without_payloads_says_they_are_not_present(vine_cli, adopted, tmp_path):
    assert vine_cli("snapshot", "create", tmp_path / "brain.bundle", "--forest", adopted).returncode == 0
    result = vine_cli("snapshot", "restore", tmp_path / "brain.bundle", "--forest", tmp_path / "restored", "--json")
    assert result.returncode == 0, result.describe()
    restored = result.json()
    assert restored["payloads"] == 0 and len(restored["absent"]) == 5
    assert [line.split(":")[0] for line in restored["warnings"]] == ["warning W_PAYLOADS_ABSENT"]


def test_errors_are_one_line_with_exit_2_and_an_envelope_with_json(vine_cli, adopted, tmp_path):
    assert vine_cli("snapshot", "create", tmp_path / "brain.bundle", "--forest", adopted).returncode == 0
    (tmp_path / "taken").mkdir()

    result = vine_cli("snapshot", "restore", tmp_path / "brain.bundle", "--forest", tmp_path / "taken")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (f"error E_EXISTS: {tmp_path / 'taken'} already exists (A restore never writes into an "
                             "existing folder: name a new one.)\n")

    again = vine_cli("snapshot", "create", tmp_path / "brain.bundle", "--forest", adopted, "--json")
    assert again.returncode == 2 and again.json()["error"]["code"] == "E_EXISTS"

    cut = tmp_path / "cut.bundle"
    cut.write_bytes((tmp_path / "brain.bundle").read_bytes()[:-200])
    broken = vine_cli("snapshot", "restore", cut, "--forest", tmp_path / "restored")
    assert broken.returncode == 2 and len(broken.stderr.splitlines()) == 1
    assert broken.stderr.startswith(f"error E_CORRUPT: {cut} is not a whole forest snapshot: ")
    assert not (tmp_path / "restored").exists()

    missing = vine_cli("snapshot", "restore", tmp_path / "nothing.bundle", "--forest", tmp_path / "restored")
    assert missing.returncode == 2 and missing.stderr.startswith("error E_NOT_FOUND: snapshot ")


def test_restore_needs_its_destination(vine_cli, tmp_path):
    result = vine_cli("snapshot", "restore", tmp_path / "brain.bundle")
    assert result.returncode == 2 and "--forest" in result.stderr
