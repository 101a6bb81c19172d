"""Calling plugin code: one isolated call, and each implementation of a hook in turn.

pluggy's own ``pm.hook.<name>(...)`` calls implementations in LIFO order and
aborts the whole chain on the first exception, so one broken plugin would cost
every other plugin its turn (STYLE.md 6). The host never calls a hook that way.
Instead:

- ``isolated(call)`` runs one piece of plugin code (an implementation, a
  converter's ``convert``, a describer's ``describe``) and turns whatever it raises
  into a ``CallOutcome`` carrying the error as one line; optionally it also
  catches what the code printed or warned (``chatter``).
- ``HookCaller.call_each(hook_name, arguments)`` yields one ``CallOutcome`` per
  implementation of any hook, in discovery order (``tryfirst``/``trylast``
  honoured), each call isolated and naming its plugin. A hook wrapper is never
  called: its outcome says so and the caller words the problem.

So a hookspec added to ``hookspecs.py`` needs no new calling code: the caller
asks ``call_each`` and decides what an outcome means (chain the results, take the
first, record the failures). ``call_each`` is lazy: the next implementation is
called only when the caller asks for it, after it has dealt with the previous
outcome.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, TypeVar, Union

import pluggy

from monkeyllm_gardener.chatter import captured_chatter
from monkeyllm_gardener.host.discovery import PluginInfo
from monkeyllm_gardener.error_lines import error_line
from monkeyllm_gardener.host.problems import PluginLoadFailure

# What a plugin's code may raise that must fail only that plugin's call. SystemExit is
# included: a converter wrapping a tool's main() that calls sys.exit() must not end
# the whole batch. KeyboardInterrupt is not: Ctrl-C still stops the run.
PLUGIN_FAILURES: tuple[type[BaseException], ...] = (Exception, SystemExit)

T = TypeVar("T")
# A hook's arguments: the same mapping for every implementation, or made afresh
# for each one from the plugin about to be called (a copy to edit, a callback
# stamped with the plugin's name).
HookArguments = Union[Mapping[str, Any], Callable[[PluginInfo], Mapping[str, Any]]]


@dataclass(frozen=True, kw_only=True)
class CallOutcome:
    """What one call of plugin code came to: its value, or why it has none."""

    plugin: str = ""  # the plugin's name as users see it ("" outside a hook call)
    value: Any = None
    error: str | None = None  # what it raised, as one line (``error_lines.error_line``)
    chatter: tuple[str, ...] = ()  # what it printed or warned, when that was captured
    wrapper: bool = False  # a hook wrapper: not called, the host does not support them

    @property
    def ok(self) -> bool:
        return self.error is None and not self.wrapper


def isolated(call: Callable[[], T], *, accept: Callable[[T], Any] | None = None,
             capture_chatter: bool = False, plugin: str = "") -> CallOutcome:
    """Run ``call()``; what it raises becomes the outcome's ``error``.

    ``accept(value)`` runs inside the same isolation and its return value is the
    outcome's value: the place to reject a wrong type, so that "returned str, not
    a Conversion" is that plugin's failure like any exception. ``capture_chatter``
    catches warnings and printing during ``call()`` only (``chatter.py``).
    A ``PluginLoadFailure`` passes through: it is a strict host stopping, not a
    plugin failing.
    """
    said: list[str] = []
    try:
        if capture_chatter:
            with captured_chatter() as said:
                value = call()
        else:
            value = call()
        accepted = value if accept is None else accept(value)
    except PluginLoadFailure:
        raise
    except PLUGIN_FAILURES as exc:
        return CallOutcome(plugin=plugin, error=error_line(exc))
    return CallOutcome(plugin=plugin, value=accepted, chatter=tuple(said))


class HookCaller:
    """Each implementation of a hook, in discovery order, each call isolated."""

    def __init__(self, pm: pluggy.PluginManager, plugins: Mapping[str, PluginInfo]) -> None:
        self._pm = pm
        self._plugins = plugins  # pluggy's plugin name -> what discovery knows of it

    def implementations(self, hook_name: str) -> list[pluggy.HookImpl]:
        """Implementations in discovery order (tryfirst/trylast honoured), never
        pluggy's LIFO call order."""
        caller = getattr(self._pm.hook, hook_name, None)
        if caller is None:
            return []

        def key(impl: pluggy.HookImpl) -> tuple[int, int]:
            band = 0 if impl.tryfirst else 2 if impl.trylast else 1
            return band, self._plugins[impl.plugin_name].order

        return sorted((impl for impl in caller.get_hookimpls() if impl.plugin_name in self._plugins), key=key)

    def hooks_of(self, plugin: PluginInfo) -> list[str]:
        """The hooks ``plugin`` implements, by name, sorted."""
        callers = self._pm.get_hookcallers(self._pm.get_plugin(plugin.pm_name)) or []
        return sorted({caller.name for caller in callers})

    def has(self, hook_name: str) -> bool:
        """True when a loaded plugin implements ``hook_name`` (a wrapper counts)."""
        return bool(self.implementations(hook_name))

    def call_each(self, hook_name: str, arguments: HookArguments, *,
                  accept: Callable[[Any, Mapping[str, Any]], Any] | None = None,
                  capture_chatter: bool = False) -> Iterator[CallOutcome]:
        """One outcome per implementation of ``hook_name``, called lazily in order.

        ``arguments`` are the hook's arguments by name (each implementation gets
        the subset it declares, as pluggy allows), or a function of the plugin
        making them for that plugin's call. ``accept(value, arguments)`` checks or
        transforms a result inside the isolation (``isolated``).
        """
        for impl in self.implementations(hook_name):
            info = self._plugins[impl.plugin_name]
            if impl.hookwrapper or impl.wrapper:
                yield CallOutcome(plugin=info.name, wrapper=True)
                continue
            given = arguments(info) if callable(arguments) else arguments
            missing = [name for name in impl.argnames if name not in given]
            if missing:  # the host's mistake, not the plugin's: never isolated
                raise TypeError(f"{hook_name} called without {', '.join(missing)}")
            yield isolated(
                lambda: impl.function(*[given[name] for name in impl.argnames]),
                accept=None if accept is None else (lambda value: accept(value, given)),
                capture_chatter=capture_chatter,
                plugin=info.name,
            )
