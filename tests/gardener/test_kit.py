"""The plugin kit as a plugin author meets it: every public name documented, the
protocols matching what the built-ins register, the model client on a real
OpenAI-compatible server (127.0.0.1)."""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import monkeyllm_gardener
from monkeyllm_gardener import Conversion, Converter, Describer, MediaInfo, OptionalDependencies, kit
from monkeyllm_gardener.host.builtins import BUILTIN_PLUGIN_MODULES
from monkeyllm_gardener.curator.testing_server import ScriptedOpenAIServer, chat_completion


def kit_modules() -> list[ModuleType]:
    return [importlib.import_module(found.name)
            for found in pkgutil.iter_modules(kit.__path__, "monkeyllm_gardener.kit.")]


def test_every_kit_module_and_public_function_or_class_is_documented() -> None:
    undocumented = [module.__name__ for module in kit_modules() if not (module.__doc__ or "").strip()]
    for name in kit.__all__:
        value = getattr(kit, name)
        if (inspect.isfunction(value) or inspect.isclass(value)) and not inspect.getdoc(value):
            undocumented.append(name)
    assert undocumented == []


def test_the_kit_exports_each_modules_public_names_and_the_protocols_are_package_names() -> None:
    modules = kit_modules()
    assert sorted(name for module in modules for name in module.__all__) == kit.__all__
    for module in modules:
        for name in module.__all__:
            assert getattr(kit, name) is getattr(module, name)
    assert monkeyllm_gardener.Converter is kit.Converter
    assert monkeyllm_gardener.Describer is kit.Describer
    assert monkeyllm_gardener.OptionalDependencies is kit.OptionalDependencies


def test_loading_the_builtins_does_not_load_the_curator() -> None:
    # The model client and the tag rule are the Curator's; a run without a vision
    # model or a photo's keywords (every worker process, a no-change sync) never
    # pays for importing it.
    script = ("import importlib, sys\n"
              "from monkeyllm_gardener.host.builtins import BUILTIN_PLUGIN_MODULES\n"
              "for name in BUILTIN_PLUGIN_MODULES:\n"
              "    importlib.import_module(name)\n"
              "print(sorted(m for m in sys.modules if m.startswith('monkeyllm_gardener.curator')))\n")
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"


def registered_by_builtins(hook: str) -> list[Any]:
    items: list[Any] = []
    for name in BUILTIN_PLUGIN_MODULES:
        module = importlib.import_module(name)
        if hasattr(module, hook):
            getattr(module, hook)(register=lambda item, priority=0.0: items.append(item))
    return items


def test_every_builtin_converter_is_a_converter_and_those_needing_modules_say_which() -> None:
    converters = registered_by_builtins("register_converters")
    assert len(converters) >= 9
    assert all(isinstance(converter, Converter) for converter in converters)
    needing = {c.name for c in converters if isinstance(c, OptionalDependencies)}
    assert {"xlsx", "xls", "docx", "image", "audio"} <= needing


def test_the_vision_describer_is_a_describer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MONKEYLLM_VISION_MODEL", "vision-model")
    monkeypatch.setenv("MONKEYLLM_LLM_ENDPOINT", "http://127.0.0.1:9/v1")
    [describer] = registered_by_builtins("register_describers")
    assert isinstance(describer, Describer)


class DuckConverter:  # no base class: a plugin's converter as the README shows it
    name = "duck"
    extensions = (".duck",)

    def convert(self, path: Path) -> Conversion:
        return Conversion(kind="markdown", markdown=f"# {path.stem}\n")


class NoConvert:
    name = "half"
    extensions = (".half",)


class Stub:
    name = "stub"
    kinds = frozenset({"audio"})

    def describe(self, path: Path, info: MediaInfo) -> str | None:
        return None


def test_the_protocols_are_structural() -> None:
    assert isinstance(DuckConverter(), Converter)
    assert not isinstance(DuckConverter(), OptionalDependencies)
    assert not isinstance(NoConvert(), Converter)
    assert isinstance(Stub(), Describer) and not isinstance(Stub(), Converter)


def test_model_client_reads_the_binding_and_answers_with_the_first_choice() -> None:
    with ScriptedOpenAIServer(default_reply=chat_completion("A diagram of three boxes.")) as server:
        client = kit.ModelClient.from_env({"MONKEYLLM_LLM_ENDPOINT": server.base_url, "MONKEYLLM_LLM_RETRIES": "0"})
        try:
            text = client.complete(model="m", messages=[{"role": "user", "content": "describe"}], max_tokens=50)
        finally:
            client.close()
        [sent] = server.requests
    assert text == "A diagram of three boxes."
    assert (sent["model"], sent["max_tokens"], sent["messages"][0]["content"]) == ("m", 50, "describe")


def test_model_client_failures_are_one_line_kit_errors() -> None:
    with pytest.raises(kit.ModelConfigError, match="MONKEYLLM_LLM_ENDPOINT"):
        kit.ModelClient.from_env({})
    with ScriptedOpenAIServer(default_reply=(503, {"error": {"message": "overloaded"}})) as server:
        client = kit.ModelClient.from_env({"MONKEYLLM_LLM_ENDPOINT": server.base_url, "MONKEYLLM_LLM_RETRIES": "0"})
        with pytest.raises(kit.ModelFailure, match="HTTP 503"):
            client.complete(model="m", messages=[{"role": "user", "content": "x"}], max_tokens=5)
        client.close()


def readme_plugin_example() -> str:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Writing a plugin"):]
    return section[section.index("```python\n") + len("```python\n"):section.index("\n```\n")]


def test_the_readme_plugin_example_converts_a_log_as_it_says(tmp_path: Path) -> None:
    namespace: dict[str, Any] = {"__name__": "readme_example"}
    exec(compile(readme_plugin_example(), "README.md", "exec"), namespace)  # the asserts in it run too
    log = tmp_path / "Disk Usage.log"
    log.write_bytes("Host | Disk %\nweb-1 | 91.5\ncaf\u00e9 | 12\n".encode("cp1252"))
    conversion = namespace["LogConverter"]().convert(log)
    assert conversion.schema == {"disk_usage": {"columns": {"host": "TEXT", "disk_pct": "REAL"}}}
    assert conversion.rows == {"disk_usage": [("web-1", 91.5), ("caf\u00e9", 12.0)]}
    assert "Header `Disk %` is named `disk_pct`." in conversion.manual_notes
    assert conversion.warnings == ("Disk Usage.log: decoded as cp1252 (not valid UTF-8); "
                                   "re-save as UTF-8 if characters look wrong",)
    registered: list[Any] = []
    namespace["register_converters"](register=lambda converter, priority: registered.append(converter))
    assert [converter.name for converter in registered] == ["acme-log"]
