"""Discovery through REAL distributions: a ``<name>-1.0.dist-info`` folder with
METADATA and entry_points.txt plus the plugin module, on sys.path, found by
importlib.metadata exactly as an installed plugin is."""
from __future__ import annotations

import sys
import textwrap
import uuid
from pathlib import Path
from typing import Callable, Iterator

import pytest

from monkeyllm_gardener.host import PluginHost, PluginLoadFailure

MakeDist = Callable[..., str]

CONVERTER_MODULE = """
from monkeyllm_gardener.conversion import Conversion, ConversionError

class {cls}:
    {attributes}
    def convert(self, path):
        return Conversion(kind="markdown", title="{label}", markdown="converted by {label}: " + path.name)
"""

RAISING_CONVERTER_MODULE = """
from monkeyllm_gardener.conversion import ConversionError

class Broken:
    extensions = (".csv",)
    name = "{label}"
    def convert(self, path):
        raise ConversionError("cannot read " + path.name + ": header row is binary")
"""


@pytest.fixture
def site_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], Path]]:
    """Site folders put at the FRONT of sys.path; the last one made is searched first."""
    before = set(sys.modules)

    def make(label: str) -> Path:
        folder = tmp_path / f"site-{label}"
        folder.mkdir()
        monkeypatch.syspath_prepend(str(folder))
        return folder

    yield make
    for name in set(sys.modules) - before:
        if name.startswith("mlplug_"):
            del sys.modules[name]


@pytest.fixture
def make_dist(site_dirs: Callable[[str], Path]) -> MakeDist:
    """Write a distribution; returns the unique module name it was given."""

    def make(name: str, entry_points: dict[str, dict[str, str]], module_source: str = "",
             *, version: str = "1.0", site: Path | None = None) -> str:
        folder = site or site_dirs(name)
        module = f"mlplug_{name.replace('-', '_')}_{uuid.uuid4().hex[:8]}"
        (folder / f"{module}.py").write_text(textwrap.dedent(module_source), encoding="utf-8")
        dist_info = folder / f"{name.replace('-', '_')}-{version}.dist-info"
        dist_info.mkdir()
        (dist_info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
        )
        lines = []
        for group, items in entry_points.items():
            lines.append(f"[{group}]")
            lines.extend(f"{key} = {value.format(module=module)}" for key, value in items.items())
        (dist_info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        return module

    return make


def plugin_host(**overrides: object) -> PluginHost:
    options: dict[str, object] = {"builtins": (), "environ": {}}
    options.update(overrides)
    return PluginHost(**options)  # type: ignore[arg-type]


def csv_file(tmp_path: Path, name: str = "invoices.csv") -> Path:
    path = tmp_path / name
    path.write_text("id,total\n1,2.5\n", encoding="utf-8")
    return path


def test_converter_entry_point_claims_the_extension_named_by_the_entry_point(
    make_dist: MakeDist, tmp_path: Path
) -> None:
    make_dist(
        "pdf-plugin",
        {"monkeyllm.converters": {"pdf": "{module}:PdfConverter"}},
        CONVERTER_MODULE.format(cls="PdfConverter", attributes="pass", label="pdf-plugin"),
        version="2.3.1",
    )
    host = plugin_host()
    [claimant] = host.claimants(".pdf")
    assert (claimant.name, claimant.plugin, claimant.source) == ("pdf", "pdf-plugin", "plugin")

    contract = tmp_path / "contract.pdf"
    contract.write_bytes(b"%PDF")
    result = host.convert(contract)
    assert result.converter == "pdf"
    assert result.conversion is not None
    assert result.conversion.markdown == "converted by pdf-plugin: contract.pdf"

    [block] = host.plugins_report()["plugins"]
    assert block["name"] == "pdf-plugin"
    assert block["version"] == "2.3.1"
    assert block["converters"][0]["extensions"] == [".pdf"]
    assert host.load_errors == []


def test_extensions_attribute_overrides_the_entry_point_name(make_dist: MakeDist) -> None:
    make_dist(
        "office-plugin",
        {"monkeyllm.converters": {"office": "{module}:Office"}},
        CONVERTER_MODULE.format(cls="Office", attributes='extensions = (".odt", ".ods")', label="office"),
    )
    host = plugin_host()
    assert [c.name for c in host.claimants(".odt")] == ["office"]
    assert [c.name for c in host.claimants(".ods")] == ["office"]
    assert host.claimants(".office") == []


def test_plain_function_converter_entry_point(make_dist: MakeDist, tmp_path: Path) -> None:
    make_dist(
        "rtf-plugin",
        {"monkeyllm.converters": {"rtf": "{module}:rtf_to_markdown"}},
        """
        from monkeyllm_gardener.conversion import Conversion

        def rtf_to_markdown(path):
            return Conversion(kind="markdown", markdown="rtf body")
        """,
    )
    memo = tmp_path / "memo.rtf"
    memo.write_text("{\\rtf1}", encoding="utf-8")
    result = plugin_host().convert(memo)
    assert result.converter == "rtf"
    assert result.conversion is not None and result.conversion.markdown == "rtf body"


BROKEN_PLUGINS = [
    # (label, entry point value, module source, what the one-line error says)
    ("import-fails", "{module}:Converter", "import definitely_not_installed_xyz\n",
     "ModuleNotFoundError: No module named 'definitely_not_installed_xyz'"),
    ("wrong-object", "{module}:NoSuchConverter",
     CONVERTER_MODULE.format(cls="Converter", attributes="pass", label="x"), "NoSuchConverter"),
    ("raises-on-load", "{module}:Converter", "raise RuntimeError('license server unreachable')\n",
     "RuntimeError: license server unreachable"),
    ("exits-on-load", "{module}:Converter", "import sys\nsys.exit(3)\n", "SystemExit"),
    ("init-raises", "{module}:Converter",
     "class Converter:\n    def __init__(self):\n        raise ValueError('needs a config file')\n",
     "ValueError: needs a config file"),
    ("no-convert", "{module}:Converter", "class Converter:\n    pass\n", "has no convert(path) method"),
]


@pytest.mark.parametrize(("label", "value", "source", "fragment"), BROKEN_PLUGINS, ids=[b[0] for b in BROKEN_PLUGINS])
def test_a_broken_converter_plugin_is_reported_and_the_rest_still_load(
    make_dist: MakeDist, label: str, value: str, source: str, fragment: str
) -> None:
    make_dist(f"broken-{label}", {"monkeyllm.converters": {"xyz": value}}, source)
    make_dist(
        "good-pdf",
        {"monkeyllm.converters": {"pdf": "{module}:Good"}},
        CONVERTER_MODULE.format(cls="Good", attributes="pass", label="good"),
    )
    host = plugin_host()
    assert [c.plugin for c in host.claimants(".pdf")] == ["good-pdf"]
    assert host.claimants(".xyz") == []
    [problem] = host.load_errors
    assert problem.plugin == f"broken-{label}"
    assert problem.entry_point.startswith("monkeyllm.converters: xyz = ")
    assert fragment in problem.error
    assert "\n" not in problem.error
    assert problem.as_dict() in host.plugins_report()["load_errors"]


def test_strict_mode_raises_on_the_first_broken_plugin(make_dist: MakeDist) -> None:
    make_dist("broken", {"monkeyllm.converters": {"xyz": "{module}:Nope"}}, "")
    with pytest.raises(PluginLoadFailure, match="broken"):
        plugin_host(strict=True)


MISSPELT_PLUGIN = """
from monkeyllm_gardener.hookspecs import hookimpl

@hookimpl
def register_converter(register):
    raise AssertionError("a misspelt hook must never be called")

@hookimpl
def on_curate(draft):
    draft["tags"] = ["from-misspelt-plugin"]
    return draft
"""


def test_a_misspelt_hookimpl_is_a_load_error_naming_the_right_hook(make_dist: MakeDist) -> None:
    make_dist("typo-plugin", {"monkeyllm": {"typo": "{module}"}}, MISSPELT_PLUGIN)
    make_dist("fine-plugin", {"monkeyllm.hooks": {"on_curate": "{module}:tag"}},
              "def tag(draft):\n    draft['tags'] = draft.get('tags', []) + ['fine']\n    return draft\n")
    host = plugin_host()
    [problem] = host.load_errors
    assert problem.plugin == "typo-plugin"
    assert "unknown hook 'register_converter' (did you mean 'register_converters'?)" in problem.error
    # The whole misspelt plugin is skipped, its valid-looking on_curate included.
    draft, problems = host.run_on_curate({"id": "n", "type": "note", "tags": []})
    assert draft["tags"] == ["fine"]
    assert problems == []
    assert [p["name"] for p in host.plugins_report()["plugins"]] == ["fine-plugin"]


def test_misspelt_hookimpl_in_strict_mode_raises(make_dist: MakeDist) -> None:
    make_dist("typo-plugin", {"monkeyllm": {"typo": "{module}"}}, MISSPELT_PLUGIN)
    with pytest.raises(PluginLoadFailure, match="register_converter"):
        plugin_host(strict=True)


def test_a_module_plugin_without_hookimpls_is_reported(make_dist: MakeDist) -> None:
    make_dist("forgot-decorator", {"monkeyllm": {"plugin": "{module}"}},
              "def register_converters(register):\n    pass\n")
    host = plugin_host()
    [problem] = host.load_errors
    assert "no @hookimpl functions found" in problem.error


def test_on_curate_hook_that_raises_after_mutating_loses_its_edits_and_the_next_runs(
    make_dist: MakeDist, site_dirs: Callable[[str], Path]
) -> None:
    # sys.path order decides discovery order: the site made last is searched first.
    later, earlier = site_dirs("later"), site_dirs("earlier")
    make_dist("a-raiser", {"monkeyllm.hooks": {"on_curate": "{module}:vandalize"}}, """
        def vandalize(draft):
            draft["tags"].append("half-done")
            draft["summary"] = "overwritten"
            raise KeyError("customer_id")
        """, site=earlier)
    make_dist("b-tagger", {"monkeyllm.hooks": {"on_curate": "{module}:tag"}}, """
        def tag(draft):
            draft["tags"].append("compliance")
            return draft
        """, site=later)
    host = plugin_host()
    original = {"id": "finance/q1", "type": "dataset", "summary": "Q1 invoices.", "tags": ["internal"]}
    draft, problems = host.run_on_curate(original)
    assert draft["tags"] == ["internal", "compliance"]
    assert draft["summary"] == "Q1 invoices."
    assert problems == ["on_curate a-raiser failed on finance/q1: KeyError: 'customer_id'; its edits were discarded"]
    assert original["tags"] == ["internal"]  # the caller's draft is never touched


def test_two_plugins_claiming_csv_at_equal_priority_tie_break_on_plugin_name(
    make_dist: MakeDist, site_dirs: Callable[[str], Path], tmp_path: Path
) -> None:
    # zeta is discovered first, but at equal priority the plugin NAME decides.
    second, first = site_dirs("second"), site_dirs("first")
    for name, site in (("zeta-csv", first), ("alpha-csv", second)):
        make_dist(name, {"monkeyllm.converters": {"csv": "{module}:Csv"}},
                  CONVERTER_MODULE.format(cls="Csv", attributes=f'name = "{name}"', label=name), site=site)
    host = plugin_host()
    assert [c.name for c in host.claimants(".csv")] == ["alpha-csv", "zeta-csv"]
    assert plugin_host().convert(csv_file(tmp_path)).converter == "alpha-csv"


def test_lower_priority_beats_plugin_name(make_dist: MakeDist) -> None:
    make_dist("alpha-csv", {"monkeyllm.converters": {"csv": "{module}:Csv"}},
              CONVERTER_MODULE.format(cls="Csv", attributes='name = "alpha"', label="a"))
    make_dist("zeta-csv", {"monkeyllm.converters": {"csv": "{module}:Csv"}},
              CONVERTER_MODULE.format(cls="Csv", attributes='name = "zeta"\n    priority = -1.0', label="z"))
    assert [c.name for c in plugin_host().claimants(".csv")] == ["zeta", "alpha"]


def test_first_claimant_failing_falls_through_to_the_next_with_the_fallback_recorded(
    make_dist: MakeDist, tmp_path: Path
) -> None:
    make_dist("aa-strict-csv", {"monkeyllm.converters": {"csv": "{module}:Broken"}},
              RAISING_CONVERTER_MODULE.format(label="strict-csv"))
    make_dist("bb-lenient-csv", {"monkeyllm.converters": {"csv": "{module}:Csv"}},
              CONVERTER_MODULE.format(cls="Csv", attributes='name = "lenient-csv"', label="lenient"))
    result = plugin_host().convert(csv_file(tmp_path))
    assert result.converter == "lenient-csv"
    assert result.fallbacks == ["strict-csv failed on invoices.csv: cannot read invoices.csv: header row is binary"]
    assert result.error is None


@pytest.mark.parametrize(
    ("allow_list", "expected"),
    [
        (None, ["alpha-csv", "zeta-csv"]),
        ("", []),
        ("   ", []),
        ("zeta-csv", ["zeta-csv"]),
        ("Zeta_CSV", ["zeta-csv"]),  # distribution names compare normalized
        ("alpha-csv, zeta-csv", ["alpha-csv", "zeta-csv"]),
        ("nothing-by-that-name", []),
    ],
)
def test_allow_list_env_var_limits_third_party_plugins(
    make_dist: MakeDist, allow_list: str | None, expected: list[str]
) -> None:
    for name in ("alpha-csv", "zeta-csv"):
        make_dist(name, {"monkeyllm.converters": {"csv": "{module}:Csv"}},
                  CONVERTER_MODULE.format(cls="Csv", attributes=f'name = "{name}"', label=name))
    environ = {} if allow_list is None else {"MONKEYLLM_LOAD_PLUGINS": allow_list}
    host = plugin_host(environ=environ)
    assert [c.name for c in host.claimants(".csv")] == expected
    assert host.load_errors == []


def test_allow_list_matches_entry_point_names_too(make_dist: MakeDist) -> None:
    make_dist("multi", {"monkeyllm.converters": {"pdf": "{module}:Conv", "rtf": "{module}:Conv"}},
              CONVERTER_MODULE.format(cls="Conv", attributes="pass", label="m"))
    host = plugin_host(environ={"MONKEYLLM_LOAD_PLUGINS": "rtf"})
    assert [c.name for c in host.claimants(".rtf")] == ["rtf"]
    assert host.claimants(".pdf") == []


def test_builtins_load_even_when_the_allow_list_is_empty(make_dist: MakeDist, site_dirs: Callable[[str], Path]) -> None:
    folder = site_dirs("builtin")
    module = f"mlplug_builtin_{uuid.uuid4().hex[:8]}"
    source = CONVERTER_MODULE.format(
        cls="Csv", attributes='name = "builtin-csv"\n    extensions = (".csv",)', label="b"
    ) + (
        "\nfrom monkeyllm_gardener.hookspecs import hookimpl\n\n"
        "@hookimpl\ndef register_converters(register):\n    register(Csv())\n"
    )
    (folder / f"{module}.py").write_text(source, encoding="utf-8")
    make_dist("alpha-csv", {"monkeyllm.converters": {"csv": "{module}:Csv"}},
              CONVERTER_MODULE.format(cls="Csv", attributes='name = "alpha-csv"', label="a"))
    host = plugin_host(builtins=(module,), environ={"MONKEYLLM_LOAD_PLUGINS": ""})
    assert host.load_errors == []
    assert [c.name for c in host.claimants(".csv")] == ["builtin-csv"]


def test_converter_missing_an_optional_module_is_unavailable_with_its_hint(
    make_dist: MakeDist, tmp_path: Path
) -> None:
    make_dist("fancy-xlsx", {"monkeyllm.converters": {"xlsx": "{module}:Fancy"}},
              CONVERTER_MODULE.format(cls="Fancy", label="fancy", attributes=(
                  'requires = ("definitely_missing_mod",)\n'
                  '    install_hint = "pip install fancy-xlsx[full]"')))
    host = plugin_host()
    assert host.claimants(".xlsx") == []
    [unavailable] = host.unavailable_for(".xlsx")
    assert unavailable.unavailable_reason == "needs definitely_missing_mod: pip install fancy-xlsx[full]"

    book = tmp_path / "book.xlsx"
    book.write_bytes(b"PK")
    result = host.convert(book)
    assert result.conversion is None and result.error is None
    assert result.unsupported == (
        "xlsx for .xlsx is unavailable: needs definitely_missing_mod: pip install fancy-xlsx[full]"
    )
    [converter] = host.plugins_report()["plugins"][0]["converters"]
    assert converter["available"] is False
    assert "definitely_missing_mod" in converter["unavailable_reason"]


def test_unknown_simple_hook_name_is_a_load_error(make_dist: MakeDist) -> None:
    make_dist("typo-hooks", {"monkeyllm.hooks": {"on_curat": "{module}:tag"}}, "def tag(d):\n    return d\n")
    [problem] = plugin_host().load_errors
    assert "unknown hook name 'on_curat'" in problem.error


def test_pluggy_module_plugin_registers_converters_and_hooks(make_dist: MakeDist, tmp_path: Path) -> None:
    make_dist("full-plugin", {"monkeyllm": {"full": "{module}"}}, """
        from monkeyllm_gardener.conversion import Conversion
        from monkeyllm_gardener.hookspecs import hookimpl

        class Org:
            name = "org-mode"
            extensions = (".org",)
            def convert(self, path):
                return Conversion(kind="markdown", markdown="* org")

        @hookimpl
        def register_converters(register):
            register(Org(), priority=5)

        @hookimpl
        def on_curate(draft):
            draft["aliases"] = ["org note"]
        """)
    host = plugin_host()
    [block] = host.plugins_report()["plugins"]
    assert block["hooks"] == ["on_curate", "register_converters"]
    assert block["converters"] == [{"name": "org-mode", "extensions": [".org"], "priority": 5.0,
                                    "available": True, "unavailable_reason": None}]
    draft, problems = host.run_on_curate({"id": "n", "type": "note"})
    assert draft["aliases"] == ["org note"] and problems == []


def test_simple_hook_entry_points_serve_the_registry_hooks(make_dist: MakeDist, tmp_path: Path) -> None:
    make_dist("simple-registers", {"monkeyllm.hooks": {"register_converters": "{module}:converters",
                                                       "register_describers": "{module}:describers"}}, """
        from monkeyllm_gardener.conversion import Conversion

        class Rtf:
            name = "rtf-reader"
            extensions = (".rtf",)
            def convert(self, path):
                return Conversion(kind="markdown", markdown="rtf " + path.name)

        class Alt:
            name = "alt-text"
            kinds = ("image",)
            def describe(self, path, info):
                return "a picture"

        def converters(register):
            register(Rtf(), priority=3)

        def describers(register):
            register(Alt())
        """)
    host = plugin_host()
    assert host.load_errors == []
    assert [(c.name, c.plugin, c.priority) for c in host.claimants(".rtf")] == [("rtf-reader", "simple-registers", 3.0)]
    assert [d.name for d in host.describers("image")] == ["alt-text"]
    letter = tmp_path / "letter.rtf"
    letter.write_text("{\\rtf1}", encoding="utf-8")
    assert host.convert(letter).converter == "rtf-reader"


def test_a_simple_hook_entry_point_serves_a_hook_added_to_the_spec(
    make_dist: MakeDist, site_dirs: Callable[[str], Path]
) -> None:
    specs = f"mlplug_specs_{uuid.uuid4().hex[:8]}"
    (site_dirs("specs") / f"{specs}.py").write_text(textwrap.dedent('''
        from monkeyllm_gardener.hookspecs import hookspec

        @hookspec
        def on_planted(node_id, title):
            """A hook added after the host was written."""
        '''), encoding="utf-8")
    make_dist("announcer", {"monkeyllm.hooks": {"on_planted": "{module}:announce"}},
              "def announce(node_id, title):\n    return title + ' planted as ' + node_id\n")
    make_dist("crasher", {"monkeyllm.hooks": {"on_planted": "{module}:crash"}},
              "def crash(node_id, title):\n    raise LookupError(node_id)\n")
    host = plugin_host(extra_hookspecs=(specs,))
    assert host.load_errors == []
    outcomes = {o.plugin: o for o in host.call_each("on_planted", {"node_id": "notes/q1", "title": "Q1"})}
    assert outcomes["announcer"].value == "Q1 planted as notes/q1"
    assert outcomes["crasher"].error == "LookupError: notes/q1"
    # Without the spec, the same entry point is an unknown hook name.
    [problem, _] = plugin_host().load_errors
    assert problem.error.startswith("unknown hook name 'on_planted' in monkeyllm.hooks (known: on_curate, ")
