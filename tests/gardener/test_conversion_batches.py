"""The process pool converts runs of small files as one task (``executors.batched``):
the cut keeps walk order, never puts a big file in a batch, and every file comes
back once, in order, whichever way the export mixes small and big files."""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from monkeyllm_gardener.executors import SMALL_FILE, ConversionJob, batched
from monkeyllm_gardener.pipeline import Gardener
from monkeyllm_core import Vine, init_forest


def jobs(*sizes: int) -> list[ConversionJob]:
    return [ConversionJob(path=f"/x/{i}", rel=f"{i}", known_hash=None, size=size) for i, size in enumerate(sizes)]


def rels(batches: Iterable[list[ConversionJob]]) -> list[list[str]]:
    return [[job.rel for job in batch] for batch in batches]


def test_small_files_are_cut_into_runs_and_a_big_one_is_a_batch_of_its_own() -> None:
    big = SMALL_FILE + 1
    assert rels(batched(jobs(10, 10, 10, 10, 10), files=2, small=SMALL_FILE)) == [["0", "1"], ["2", "3"], ["4"]]
    assert rels(batched(jobs(10, big, 10, 10, big, big), files=8, small=SMALL_FILE)) == [
        ["0"], ["1"], ["2", "3"], ["4"], ["5"]]
    assert rels(batched(jobs(SMALL_FILE), files=8, small=SMALL_FILE)) == [["0"]]
    assert list(batched([], files=8, small=SMALL_FILE)) == []


def test_batches_are_cut_as_they_are_asked_for() -> None:
    made = []

    def endless():  # an export's jobs, made one by one as the pipeline walks its folders
        i = 0
        while True:
            made.append(i)
            yield ConversionJob(path=f"/x/{i}", rel=f"{i}", known_hash=None, size=10)
            i += 1

    runs = batched(endless(), files=4, small=SMALL_FILE)
    assert rels([next(runs), next(runs)]) == [["0", "1", "2", "3"], ["4", "5", "6", "7"]]
    assert made == list(range(8))  # no job beyond the second batch was made


def test_a_short_run_of_small_files_still_spreads_over_every_worker(tmp_path: Path) -> None:
    from monkeyllm_gardener.executors import BATCH_FILES, ProcessConversionPool
    from monkeyllm_gardener.host import HostSpec
    pool = ProcessConversionPool(spec=HostSpec(), tmp_dir=tmp_path, jobs=2)  # forks nothing until a submit

    def batches(*sizes: int) -> list[list[ConversionJob]]:
        made = jobs(*sizes)
        return list(pool.batches(iter(made), count=len(made), names=(job.rel for job in made)))

    assert rels(batches(10, 10, 10, 10, 10)) == [["0", "1", "2"], ["3", "4"]]
    assert rels(batches(10)) == [["0"]]
    assert [len(b) for b in batches(*[10] * 40)] == [BATCH_FILES] * (40 // BATCH_FILES)
    pool.close()


def test_an_adopt_of_small_and_big_files_plants_each_once_in_walk_order(tmp_path: Path) -> None:
    source = tmp_path / "export"
    source.mkdir()
    names = []
    for i in range(30):
        # every seventh note is larger than a batch takes: it travels alone between runs
        filler = "A longer paragraph about the quarterly ledger. " * (1600 if i % 7 == 3 else 1)
        (source / f"note-{i:02d}.md").write_text(f"# Note {i}\n\n{filler}\n")
        names.append(f"note-{i:02d}")
    forest = init_forest(tmp_path / "forest", "Test forest")
    report = Gardener(forest).adopt(source, jobs=2)
    assert report.errors == []
    assert report.planted == names  # walk order, each once
    with Vine(forest, writable=False) as vine:
        assert vine.read("note-03").body.count("quarterly ledger") == 1600
        assert vine.read("note-04").frontmatter["title"] == "Note 4"


WARMED = """
import sys
from monkeyllm_gardener.executors import warm_up
from monkeyllm_gardener.host import HostSpec, host_from_spec
warm_up(HostSpec(), sys.argv[1:])
print(sorted(m for m in ("openpyxl", "docx", "xlrd", "mutagen") if m in sys.modules))
print(host_from_spec.cache_info().currsize)
"""


def warmed(*names: str) -> list[str]:
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", WARMED, *names], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).parent).stdout.splitlines()
    assert out[1] == "1"  # the host is built, so the workers forked after inherit it
    return eval(out[0])  # noqa: S307 -- our own print of a list of names


def test_the_writer_warms_the_pool_up_with_the_libraries_of_the_files_to_convert() -> None:
    """What the built-in converters of these files import is imported once, before the
    fork, and nothing the files do not need."""
    assert warmed("ledger.XLSX", "minutes.docx", "notes.md", "old.xls") == ["docx", "openpyxl", "xlrd"]
    assert warmed("notes.md", "README", "report.txt") == []
