"""Ids must be file names every OS accepts: Windows reserves device names whatever
the extension, so a forest holding ``con.md`` cannot be checked out there."""
from __future__ import annotations

import pytest

from monkeyllm_gardener.slugs import assign_dir_ids, assign_ids, slugify

RESERVED = ["con", "prn", "aux", "nul", "com1", "com9", "lpt1", "lpt9"]


@pytest.mark.parametrize("device", RESERVED)
@pytest.mark.parametrize("spelling", [str.lower, str.upper, str.title])
def test_windows_device_names_never_become_a_file_or_folder_name(device: str, spelling) -> None:
    name = spelling(device)
    file_id = assign_ids([f"{name}.txt"])[f"{name}.txt"]
    assert file_id == f"{device}-name"
    branch_id = assign_dir_ids([name])[name]
    assert branch_id == f"{device}-name/_index"


@pytest.mark.parametrize("ordinary", ["console", "auxiliary", "null", "com10", "lpt", "com"])
def test_names_that_only_contain_a_device_name_keep_their_slug(ordinary: str) -> None:
    assert slugify(f"{ordinary}.md", is_file=True) == ordinary


def test_a_reserved_name_and_its_suffixed_twin_get_distinct_ids() -> None:
    ids = assign_ids(["CON.md", "con-name.md"])
    assert len(set(ids.values())) == 2
