"""Public Word test files (tests/corpus/docx, licences in LICENSES.md) through the
converter: every one keeps at least 99% of the words of its text parts (counted
straight from the zip by bench/bench_docx_corpus.py, not by the converter), and
each says in markdown what it was made to exercise."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from monkeyllm_plugins.docx_document import DocxConverter

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "docx"
BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_docx_corpus.py"
FILES = sorted(CORPUS.rglob("*.docx"))


def _load_bench():
    spec = importlib.util.spec_from_file_location("bench_docx_corpus", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _load_bench()

# (file, what its markdown must include)
VECTORS = [
    ("python-mammoth/comments.docx", ["Ouch.", "## Comments", "| A tachyon walks into a bar. | Ouch | Michael Williamson |",
                                      "| Fin. | …Ouch. | Michael Williamson |"]),
    ("python-mammoth/footnotes.docx", ["Ouch[^1].[^2]", "[^1]: A tachyon walks into a bar.\n[^2]: Fin."]),
    ("python-mammoth/endnotes.docx", ["Ouch[^e1].[^e2]", "[^e1]: A tachyon walks into a bar."]),
    ("python-mammoth/footnote-hyperlink.docx", ["[^1]: [Example](http://www.example.com)"]),
    ("python-mammoth/strict-format.docx", ["Test"]),
    ("python-mammoth/strikethrough.docx", ["~~Today's Special: Salmon~~ Sold out"]),
    ("python-mammoth/underline.docx", ["**The <u>Sunset</u> Tree**"]),
    ("python-mammoth/text-box.docx", ["Datum plane"]),
    ("python-mammoth/tables.docx", ["Above\n\n| Top left | Top right |\n| --- | --- |\n| Bottom left | Bottom right |\n\nBelow"]),
    ("python-mammoth/tiny-picture.docx", ["[image: image1.png]"]),
    ("python-docx/hdr-header-footer.docx", ["| Header | Header for section-1 |", "| Footer | Footer for section 1 |"]),
    ("python-docx/doc-odd-even-hdrs.docx", ["| Even-page header | Even page header. |", "| Header | Odd page header. |"]),
    ("python-docx/doc-add-section.docx", ["| First-page footer | First Page Footer content |"]),
    ("python-docx/blk-paras-and-tables.docx", ["| Header | Left-side; Right-side |"]),
    ("python-docx/par-hlink-frags.docx", ["Two with [link to bookmark](#linkedBookmark).",
                                          "[http://foo.com#introduction](http://foo.com/#intro)"]),
    ("python-docx/run-char-style.docx", ["*Next run having Emphasis character style.* **Last run having Strong style.**"]),
    ("python-docx/comments-rich-para.docx", ["| Text with inline image [image: image1.jpeg] in the middle. | Other text worthy of note. |"]),
    ("markitdown/test_with_comment.docx", ["| This is a test comment. 12df-321a | …allows developers to build LLM applications |"]),
    ("markitdown/equations.docx", ["$$\\frac{a}{λ}"]),
    ("apache-poi/ThreeColHeadFoot.docx", ["| Header | First header column!\tMid header\tRight header! |",
                                          "| Footer | Footer Left\tFooter Middle\tFooter Right |"]),
    ("apache-poi/DiffFirstPageHeadFoot.docx", ["| First-page header |", "| First-page footer |"]),
    ("apache-poi/61470.docx", ["東京(とうきょう)"]),  # ruby: the base, then its reading
    ("apache-poi/Bug54849.docx", ["Blahdeblah[^1]1", "[^1]: Footnote_sdt", "[^e1]: Endnote Endnote_sdt",
                                  "| Header | This is a header header_rich_text |"]),
    ("apache-poi/Bug55142.docx", ["Rich-text1 abc**de**fg**hi**"]),
]


def test_the_corpus_is_committed() -> None:
    assert len(FILES) >= 20
    assert all(path.stat().st_size < 100_000 for path in FILES)
    assert {name for name, _ in VECTORS} <= {path.relative_to(CORPUS).as_posix() for path in FILES}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(CORPUS).as_posix())
def test_every_corpus_file_keeps_at_least_99_percent_of_its_words(path: Path) -> None:
    expected = bench.document_words(path)
    markdown = DocxConverter().convert(path).markdown
    lost = expected - bench.words(markdown)
    assert bench.kept_share(expected, markdown) >= 0.99, f"lost: {dict(lost)}"


@pytest.mark.parametrize(("name", "needles"), VECTORS, ids=[name for name, _ in VECTORS])
def test_corpus_file_says_what_it_exercises(name: str, needles: list[str]) -> None:
    markdown = DocxConverter().convert(CORPUS / name).markdown
    for needle in needles:
        assert needle in markdown


def test_text_deleted_or_moved_away_in_tracked_changes_is_not_kept() -> None:
    # Tika-792: a deleted "s", a moved-away "b": the final document shows nothing.
    assert DocxConverter().convert(CORPUS / "apache-poi" / "Tika-792.docx").markdown == ""


def test_the_word_count_sees_every_text_part() -> None:
    # The counter is the yardstick: it must count what the converter could forget.
    counted = bench.document_words(CORPUS / "python-docx" / "doc-add-section.docx")
    assert counted["footer"] == 3 and counted["header"] == 3  # default, first-page and even-page parts
    notes = bench.document_words(CORPUS / "python-mammoth" / "endnotes.docx")
    assert notes["tachyon"] == 1
    assert bench.kept_share(notes, "Ouch.") < 0.5


def test_the_whole_corpus_plants_through_the_real_cli(vine_cli: Any, tmp_path: Path) -> None:
    import shutil

    export = tmp_path / "export"
    shutil.copytree(CORPUS, export, ignore=shutil.ignore_patterns("*.md"))  # the .docx files only
    forest = vine_cli.init(tmp_path / "forest", title="Corpus")
    report = vine_cli.adopt(export, forest, timeout=300).json()
    assert report["errors"] == [] and report["unsupported"] == []
    assert len(report["planted"]) == len(FILES)
    bodies = bench.node_bodies(forest)
    for path in FILES:
        rel = path.relative_to(CORPUS).as_posix()
        assert bench.kept_share(bench.document_words(path), bodies[rel]) >= 0.99, rel
    assert " 0 error(s)" in vine_cli("validate", "--forest", forest).stdout
