"""The plugin host with plugin modules written under tmp_path and loaded as
built-ins (no entry points), plus command hooks running real tools."""
from __future__ import annotations

import multiprocessing
import pickle
import shlex
import sys
import textwrap
import uuid
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Callable, Iterator

import pytest

from monkeyllm_gardener.conversion import MediaInfo
from monkeyllm_gardener.host import (
    ConvertResult,
    PluginHost,
    convert_file,
    format_plugins_report,
    host_from_spec,
)

WritePlugin = Callable[..., str]

PLUGIN_PRELUDE = """
from monkeyllm_gardener.conversion import Conversion, ConversionError
from monkeyllm_gardener.hookspecs import hookimpl

class Converter:
    def __init__(self, name, extensions, body=None, error=None, **extra):
        self.name, self.extensions, self.body, self.error = name, extensions, body, error
        self.__dict__.update(extra)
    def convert(self, path):
        if self.error:
            raise ConversionError(self.error + " in " + path.name)
        return Conversion(kind="markdown", markdown=(self.body or self.name) + " <- " + path.name)

class Describer:
    def __init__(self, name, kinds, text=None, error=None, **extra):
        self.name, self.kinds, self.text, self.error = name, kinds, text, error
        self.__dict__.update(extra)
    def describe(self, path, info):
        if self.error:
            raise RuntimeError(self.error)
        return self.text
"""


@pytest.fixture
def write_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[WritePlugin]:
    """Write a plugin module (the prelude's Converter/Describer/hookimpl in scope);
    returns its import name, to pass as a built-in."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    written: list[str] = []

    def write(body: str, label: str = "plugin") -> str:
        # The module name is the plugin's name: the label makes its sort order known.
        module = f"mlhost_{label}_{uuid.uuid4().hex[:10]}"
        (site / f"{module}.py").write_text(PLUGIN_PRELUDE + textwrap.dedent(body), encoding="utf-8")
        written.append(module)
        return module

    yield write
    for module in written:
        sys.modules.pop(module, None)


def host_with(*modules: str, **options: object) -> PluginHost:
    settings: dict[str, object] = {"load_entry_points": False, "builtins": modules, "environ": {}}
    settings.update(options)
    return PluginHost(**settings)  # type: ignore[arg-type]


def touch(tmp_path: Path, name: str, content: str = "a,b\n1,2\n") -> Path:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return path


def python_tool(tmp_path: Path, body: str) -> str:
    tool = tmp_path / "tool.py"
    tool.write_text("import sys\n" + textwrap.dedent(body), encoding="utf-8")
    return f'{shlex.quote(sys.executable)} {shlex.quote(str(tool))} "{{input}}" "{{output}}"'


CSV_BUILTIN = """
@hookimpl
def register_converters(register):
    register(Converter("builtin-csv", (".csv",)))
"""


def test_command_hook_is_tried_before_builtins(write_plugin: WritePlugin, tmp_path: Path) -> None:
    template = python_tool(tmp_path, 'open(sys.argv[2], "w").write("# From the tool\\nbody")\n')
    host = host_with(write_plugin(CSV_BUILTIN), command_converters={".csv": template})
    assert [(c.name, c.source) for c in host.claimants(".csv")] == [
        ("command hook for .csv", "command"),
        ("builtin-csv", "builtin"),
    ]
    result = host.convert(touch(tmp_path, "data.csv"))
    assert result.converter == "command hook for .csv"
    assert result.conversion is not None and result.conversion.title == "From the tool"
    assert result.fallbacks == []


def test_failing_command_hook_falls_back_to_the_builtin_and_says_so(
    write_plugin: WritePlugin, tmp_path: Path
) -> None:
    template = python_tool(tmp_path, 'sys.stderr.write("license expired\\n"); sys.exit(2)\n')
    host = host_with(write_plugin(CSV_BUILTIN), command_converters={".csv": template})
    result = host.convert(touch(tmp_path, "data.csv"))
    assert result.converter == "builtin-csv"
    [fallback] = result.fallbacks
    assert fallback.startswith("command hook for .csv failed on data.csv: ")
    assert fallback.endswith("exited with status 2 on data.csv: license expired")


TIE_BREAK_VECTORS = [
    # (registrations, expected order): priority first, then plugin name, then registration order
    ([("p1", "first", 0.0), ("p1", "second", 0.0)], ["first", "second"]),
    ([("p1", "late-but-urgent", 0.0), ("p1", "urgent", -5.0)], ["urgent", "late-but-urgent"]),
    ([("zz", "from-zz", 0.0), ("aa", "from-aa", 0.0)], ["from-aa", "from-zz"]),
    ([("aa", "from-aa", 1.0), ("zz", "from-zz", 0.5)], ["from-zz", "from-aa"]),
]


@pytest.mark.parametrize(("registrations", "expected"), TIE_BREAK_VECTORS)
def test_claimant_order_among_builtins(
    write_plugin: WritePlugin, registrations: list[tuple[str, str, float]], expected: list[str]
) -> None:
    by_plugin: dict[str, list[str]] = {}
    for plugin, name, priority in registrations:
        by_plugin.setdefault(plugin, []).append(f"    register(Converter({name!r}, ('.csv',)), priority={priority})")
    modules = [
        write_plugin("@hookimpl\ndef register_converters(register):\n" + "\n".join(lines) + "\n", label=plugin)
        for plugin, lines in by_plugin.items()
    ]
    host = host_with(*modules)
    assert [c.name for c in host.claimants(".csv")] == expected


def test_convert_result_pickles_and_a_process_pool_worker_rebuilds_the_host(
    write_plugin: WritePlugin, tmp_path: Path
) -> None:
    host = host_with(write_plugin(CSV_BUILTIN))
    path = touch(tmp_path, "data.csv")
    local = host.convert(path)
    assert pickle.loads(pickle.dumps(local)) == local
    assert pickle.loads(pickle.dumps(host.spec)) == host.spec
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork")) as pool:
        remote = pool.submit(convert_file, host.spec, path).result(timeout=60)
    assert remote == local
    assert remote.converter == "builtin-csv"


def test_host_from_spec_builds_one_host_per_process_and_spec(write_plugin: WritePlugin) -> None:
    host = host_with(write_plugin(CSV_BUILTIN))
    rebuilt = host_from_spec(host.spec)
    assert rebuilt is host_from_spec(host.spec)
    assert rebuilt is not host
    assert [c.name for c in rebuilt.claimants(".csv")] == ["builtin-csv"]


def test_each_host_has_its_own_plugin_manager(write_plugin: WritePlugin) -> None:
    module = write_plugin(CSV_BUILTIN)
    with_plugin, bare, again = host_with(module), host_with(), host_with(module)
    assert [c.name for c in with_plugin.claimants(".csv")] == ["builtin-csv"]
    assert bare.claimants(".csv") == []
    assert [c.name for c in again.claimants(".csv")] == ["builtin-csv"]


@pytest.mark.parametrize(
    ("filename", "expected"),
    [
        ("scan.xyz", "no converter for .xyz"),
        ("Makefile", "no converter for files without an extension"),
        (".bashrc", "no converter for files without an extension"),
    ],
)
def test_unsupported_files_say_why(write_plugin: WritePlugin, tmp_path: Path, filename: str, expected: str) -> None:
    host = host_with(write_plugin(CSV_BUILTIN))
    result = host.convert(touch(tmp_path, filename))
    assert result == ConvertResult(unsupported=expected)
    assert host.unsupported_reason(filename) == expected  # from the name alone, as the pipeline asks


def test_extension_match_ignores_case(write_plugin: WritePlugin, tmp_path: Path) -> None:
    host = host_with(write_plugin(CSV_BUILTIN))
    result = host.convert(touch(tmp_path, "LOUD.CSV"))
    assert result.converter == "builtin-csv"
    assert host.unsupported_reason("LOUD.CSV") is None


def test_every_claimant_failing_reports_the_last_error_and_the_fallbacks(
    write_plugin: WritePlugin, tmp_path: Path
) -> None:
    module = write_plugin("""
        @hookimpl
        def register_converters(register):
            register(Converter("strict", (".csv",), error="ragged row 7"))
            register(Converter("lenient", (".csv",), error="not UTF-8"), priority=1)
        """)
    result = host_with(module).convert(touch(tmp_path, "bad.csv"))
    assert result.conversion is None and result.converter is None
    assert result.fallbacks == ["strict failed on bad.csv: ragged row 7 in bad.csv"]
    assert result.error == "lenient failed on bad.csv: not UTF-8 in bad.csv"


def test_a_converter_returning_something_else_is_a_failure(write_plugin: WritePlugin, tmp_path: Path) -> None:
    module = write_plugin("""
        class Sloppy:
            name = "sloppy"
            extensions = (".csv",)
            def convert(self, path):
                return "just a string"

        @hookimpl
        def register_converters(register):
            register(Sloppy())
        """)
    result = host_with(module).convert(touch(tmp_path, "x.csv"))
    assert result.error == "sloppy failed on x.csv: returned str, not a Conversion"


def test_compound_extension_claimant_goes_before_the_plain_one(write_plugin: WritePlugin, tmp_path: Path) -> None:
    module = write_plugin("""
        @hookimpl
        def register_converters(register):
            register(Converter("gzip", (".gz",)))
            register(Converter("tarball", (".tar.gz",)))
        """)
    host = host_with(module)
    assert host.convert(touch(tmp_path, "backup.tar.gz")).converter == "tarball"
    assert host.convert(touch(tmp_path, "log.gz")).converter == "gzip"


INVALID_REGISTRATIONS = [
    # (register call, fragment of the recorded error)
    ("register(Converter('', ('.csv',)))", "has no name"),
    ("register(Converter('loud', ('.CSV',)))", "must be lowercase with the dot"),
    ("register(Converter('nodot', ('csv',)))", "must be lowercase with the dot"),
    ("register(Converter('bare', '.csv'))", "not the string '.csv'"),
    ("register(Converter('none', ()))", "claims no extensions"),
    ("register(Converter('nan', ('.csv',)), priority=float('nan'))", "priority must be a finite number"),
    ("register(Converter('text-priority', ('.csv',)), priority='high')", "priority must be a finite number"),
    ("register(object())", "has no name"),
    ("register(Converter('good', ('.csv',)))", "already registered by"),  # duplicate of the good one below
]


@pytest.mark.parametrize(("call", "fragment"), INVALID_REGISTRATIONS)
def test_invalid_registrations_are_reported_and_skipped(write_plugin: WritePlugin, call: str, fragment: str) -> None:
    module = write_plugin(f"""
        @hookimpl
        def register_converters(register):
            register(Converter("good", (".csv",)))
            {call}
        """)
    host = host_with(module)
    assert [c.name for c in host.claimants(".csv")] == ["good"]
    [problem] = host.load_errors
    assert problem.plugin == module
    assert problem.entry_point == "register_converters"
    assert fragment in problem.error


def test_a_registry_hook_that_raises_keeps_what_it_registered(write_plugin: WritePlugin) -> None:
    module = write_plugin("""
        @hookimpl
        def register_converters(register):
            register(Converter("before", (".csv",)))
            raise RuntimeError("lost my config")
        """, label="aa")
    host = host_with(module, write_plugin(CSV_BUILTIN, label="zz"))
    assert [c.name for c in host.claimants(".csv")] == ["before", "builtin-csv"]
    [problem] = host.load_errors
    assert "register_converters raised RuntimeError: lost my config" in problem.error


def test_a_missing_builtin_is_a_load_error_not_a_crash(write_plugin: WritePlugin) -> None:
    host = host_with("monkeyllm_plugins.does_not_exist_yet", write_plugin(CSV_BUILTIN))
    assert [c.name for c in host.claimants(".csv")] == ["builtin-csv"]
    [problem] = host.load_errors
    assert (problem.plugin, problem.entry_point) == ("monkeyllm_plugins.does_not_exist_yet", "builtin")
    assert problem.error.startswith("failed to import: ModuleNotFoundError")


# -- on_curate --------------------------------------------------------------------


def curate(write_plugin: WritePlugin, *hook_bodies: str, draft: dict | None = None) -> tuple[dict, list[str], list[str]]:
    modules = [write_plugin("@hookimpl\ndef on_curate(draft):\n" + textwrap.indent(textwrap.dedent(b), "    "))
               for b in hook_bodies]
    original = draft or {"id": "notes/q1", "type": "note", "title": "Q1", "tags": ["internal"],
                         "source_path": "notes/q1.md", "payload_sha256": "abc"}
    result, problems = host_with(*modules).run_on_curate(original)
    return result, problems, modules


def test_on_curate_hooks_run_in_discovery_order_on_each_others_results(write_plugin: WritePlugin) -> None:
    draft, problems, _ = curate(
        write_plugin,
        'draft["tags"].append("first")\nreturn draft\n',
        'draft["tags"].append("second")\n',  # returns None: its in-place edits count
    )
    assert draft["tags"] == ["internal", "first", "second"]
    assert problems == []


def test_on_curate_may_replace_the_draft(write_plugin: WritePlugin) -> None:
    draft, problems, _ = curate(
        write_plugin, 'return {"id": draft["id"], "type": "note", "title": "Renamed", "tags": []}\n'
    )
    assert draft["title"] == "Renamed" and draft["tags"] == []
    # Provenance the replacement dropped comes back, and that is stated.
    assert draft["source_path"] == "notes/q1.md" and draft["payload_sha256"] == "abc"
    assert problems == ["on_curate %s tried to change payload_sha256, source_path on notes/q1; reverted" % _[0]]


def test_on_curate_cannot_change_identity_or_provenance(write_plugin: WritePlugin) -> None:
    draft, problems, modules = curate(write_plugin, """
        draft["id"] = "elsewhere"
        draft["type"] = "dataset"
        draft["source_hash"] = "forged"
        draft["origin"] = "hook"
        draft["summary"] = "A kept edit."
        return draft
        """)
    assert (draft["id"], draft["type"], draft.get("source_hash"), draft.get("origin")) == ("notes/q1", "note", None, None)
    assert draft["summary"] == "A kept edit."
    assert problems == [f"on_curate {modules[0]} tried to change id, origin, source_hash, type on notes/q1; reverted"]


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ('draft["tags"].append("partial")\nraise ValueError("no customer column")\n',
         "failed on notes/q1: ValueError: no customer column; its edits were discarded"),
        ('draft["tags"].append("partial")\nreturn ["not", "a", "dict"]\n',
         "failed on notes/q1: TypeError: returned list, not a dict or None; its edits were discarded"),
        ('draft["tags"].append("partial")\nreturn {1: "x"}\n',
         "failed on notes/q1: TypeError: returned a draft with non-string key 1; its edits were discarded"),
    ],
)
def test_a_failing_on_curate_hook_loses_its_edits_and_the_next_hook_runs(
    write_plugin: WritePlugin, body: str, problem: str
) -> None:
    draft, problems, modules = curate(write_plugin, body, 'draft["tags"].append("after")\n')
    assert draft["tags"] == ["internal", "after"]
    assert problems == [f"on_curate {modules[0]} {problem}"]


def test_hook_wrappers_are_not_called_and_say_so(write_plugin: WritePlugin) -> None:
    module = write_plugin("""
        @hookimpl(wrapper=True)
        def on_curate(draft):
            draft["tags"].append("wrapped")
            return (yield)

        @hookimpl(hookwrapper=True)
        def register_converters(register):
            register(Converter("wrapped-csv", (".csv",)))
            yield
        """)
    host = host_with(module)
    assert host.claimants(".csv") == []
    [problem] = host.load_errors
    assert (problem.plugin, problem.entry_point) == (module, "register_converters")
    assert problem.error == "register_converters cannot be a hook wrapper; ignored"
    assert host.has_hook("on_curate")  # the pipeline still runs it, to say why it was skipped
    draft, problems = host.run_on_curate({"id": "notes/q1", "type": "note", "tags": []})
    assert draft["tags"] == []
    assert problems == [f"on_curate {module} is a hook wrapper, which is not supported; skipped"]


# -- any hook: one generic, isolated call of each implementation ---------------------

NEW_HOOKSPEC = """
from monkeyllm_gardener.hookspecs import hookspec

@hookspec
def on_planted(node_id, title):
    \"\"\"A hook the host has no code of its own for.\"\"\"
"""

CRASHING_ON_PLANTED = """
@hookimpl
def on_planted(node_id):
    raise RuntimeError("no route to " + node_id)
"""

ANNOUNCING_ON_PLANTED = """
@hookimpl
def on_planted(node_id, title):
    print("announcing", node_id)
    return title + " planted as " + node_id
"""


def test_a_new_hookspec_is_called_for_each_plugin_in_order_with_a_crash_isolated(
    write_plugin: WritePlugin,
) -> None:
    specs = write_plugin(NEW_HOOKSPEC, label="specs")
    crashing = write_plugin(CRASHING_ON_PLANTED, label="aa")
    announcing = write_plugin(ANNOUNCING_ON_PLANTED, label="bb")
    host = host_with(crashing, announcing, extra_hookspecs=(specs,))
    assert host.load_errors == []
    assert host.has_hook("on_planted") and not host.has_hook("on_curate")
    outcomes = list(host.call_each("on_planted", {"node_id": "notes/q1", "title": "Q1"}, capture_chatter=True))
    # Discovery order; the crash is that plugin's outcome, named, and the next plugin still ran.
    assert [(o.plugin, o.ok, o.value, o.error, o.chatter) for o in outcomes] == [
        (crashing, False, None, "RuntimeError: no route to notes/q1", ()),
        (announcing, True, "Q1 planted as notes/q1", None, ("announcing notes/q1",)),
    ]
    # Worker processes rebuild the host from its spec: the new hook travels with it.
    assert host_from_spec(host.spec).has_hook("on_planted")
    assert host.plugins_report()["plugins"][1]["hooks"] == ["on_planted"]


def test_an_implementation_of_a_hook_nobody_specified_skips_its_plugin(write_plugin: WritePlugin) -> None:
    announcing = write_plugin(ANNOUNCING_ON_PLANTED)
    host = host_with(announcing)
    assert not host.has_hook("on_planted")
    assert list(host.call_each("on_planted", {"node_id": "n", "title": "T"})) == []
    [problem] = host.load_errors
    assert problem.error == "unknown hook 'on_planted' (did you mean 'on_curate'?); plugin skipped"


# -- describers ---------------------------------------------------------------------


def image_info(name: str = "whiteboard.png") -> MediaInfo:
    return MediaInfo(kind="image", filename=name, format="PNG", size_bytes=10, width=2, height=2)


def test_describers_are_tried_in_priority_order_and_a_failure_falls_through(
    write_plugin: WritePlugin, tmp_path: Path
) -> None:
    module = write_plugin("""
        @hookimpl
        def register_describers(register):
            register(Describer("fallback", ("image",), text="a plain description"), priority=10)
            register(Describer("vision", ("image",), error="endpoint down: 503"), priority=-1)
            register(Describer("shy", ("image", "audio"), text=None), priority=0)
            register(Describer("audio-only", ("audio",), text="sound"), priority=-100)
        """)
    host = host_with(module)
    assert [d.name for d in host.describers("image")] == ["vision", "shy", "fallback"]
    assert [d.name for d in host.describers("audio")] == ["audio-only", "shy"]
    text, warnings = host.describe(touch(tmp_path, "whiteboard.png", "x"), image_info())
    assert text == "a plain description"
    assert warnings == ["describer vision failed on whiteboard.png: RuntimeError: endpoint down: 503"]


def test_no_describer_text_means_the_caller_uses_the_stub(write_plugin: WritePlugin, tmp_path: Path) -> None:
    module = write_plugin("""
        @hookimpl
        def register_describers(register):
            register(Describer("blank", ("image",), text="   "))
            register(Describer("offline", ("image",), text="never", requires=("definitely_missing_mod",)))
            register(Describer("bad-kind", ("video",), text="never"))
        """)
    host = host_with(module)
    assert host.describe(touch(tmp_path, "a.png", "x"), image_info("a.png")) == (None, [])
    [problem] = host.load_errors
    assert "kinds must be a subset of ('image', 'audio')" in problem.error
    report = host.plugins_report()["plugins"][0]["describers"]
    assert [(d["name"], d["available"]) for d in report] == [("blank", True), ("offline", False)]


# -- vine plugins -------------------------------------------------------------------


def test_plugins_report_lists_plugins_converters_availability_and_errors(
    write_plugin: WritePlugin, tmp_path: Path
) -> None:
    module = write_plugin("""
        @hookimpl
        def register_converters(register):
            register(Converter("csv", (".csv", ".tsv")), priority=2)
            register(Converter("xlsx", (".xlsx",), requires=("definitely_missing_mod",)))
        """)
    template = python_tool(tmp_path, "print('x')\n")
    host = host_with(module, "monkeyllm_plugins.not_written_yet", command_converters={".pdf": template})
    report = host.plugins_report()
    assert [(p["name"], p["source"], p["version"]) for p in report["plugins"]] == [
        ("_meta/gardener.yaml", "command", "config"),
        (module, "builtin", "builtin"),
    ]
    builtin = report["plugins"][1]
    assert builtin["hooks"] == ["register_converters"]
    assert builtin["converters"] == [
        {"name": "csv", "extensions": [".csv", ".tsv"], "priority": 2.0, "available": True,
         "unavailable_reason": None},
        {"name": "xlsx", "extensions": [".xlsx"], "priority": 0.0, "available": False,
         "unavailable_reason": 'needs definitely_missing_mod: pip install "monkeyllm[ingest]"'},
    ]
    assert report["extensions"][".csv"] == ["csv"]
    assert report["extensions"][".xlsx"] == []
    assert [e["plugin"] for e in report["load_errors"]] == ["monkeyllm_plugins.not_written_yet"]

    text = format_plugins_report(report)
    assert f"{module} (builtin, builtin)" in text
    assert "converter csv: .csv .tsv  priority 2" in text
    assert 'UNAVAILABLE (needs definitely_missing_mod: pip install "monkeyllm[ingest]")' in text
    assert "load errors (1):" in text
    assert "monkeyllm_plugins.not_written_yet [builtin]: failed to import" in text


def test_an_empty_report_says_so() -> None:
    text = format_plugins_report(host_with().plugins_report())
    assert text == "no plugins loaded\n\nload errors: none"
