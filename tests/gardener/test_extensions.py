"""Extensions as the Gardener compares them: one spelling rule, one candidate rule."""
from __future__ import annotations

from pathlib import Path

import pytest

from monkeyllm_gardener.command_hooks import CommandTemplateError, checked_extension
from monkeyllm_gardener.config import GardenerConfig
from monkeyllm_gardener.extensions import extension_candidates, normalize_extension
from monkeyllm_gardener.host import PluginHost


@pytest.mark.parametrize("spelling", ["PDF", "pdf", ".pdf", " .Pdf "])
def test_every_spelling_of_an_extension_means_the_same_one(spelling: str) -> None:
    assert normalize_extension(spelling) == ".pdf"


@pytest.mark.parametrize(("filename", "candidates"), [
    ("Report.PDF", [".pdf"]),
    ("backup.tar.gz", [".tar.gz", ".gz"]),
    ("a.b.c.d.tar.gz", [".d.tar.gz", ".tar.gz", ".gz"]),  # at most three suffixes
    (".bashrc", []),
    ("README", []),
])
def test_a_file_offers_its_extensions_most_specific_first(filename: str, candidates: list[str]) -> None:
    assert extension_candidates(filename) == candidates


@pytest.mark.parametrize("bad", ["", "   ", "p/df", ".tar..gz", "p df"])
def test_a_command_hook_key_that_is_no_extension_is_refused(bad: str) -> None:
    with pytest.raises(CommandTemplateError, match="is not an extension like '.pdf'"):
        checked_extension(bad)


def test_config_host_and_command_hooks_agree_on_the_spelling(tmp_path: Path) -> None:
    config = GardenerConfig(path=tmp_path / "gardener.yaml",
                            data={"converters": {"PDF": "tool {input}", ".Txt": "t {input}"}})
    assert sorted(config.converters) == [".pdf", ".txt"]
    host = PluginHost(command_converters=config.converters, builtins=(), load_entry_points=False, environ={})
    assert [c.name for c in host.claimants("Pdf")] == [c.name for c in host.claimants(".pdf")] != []
