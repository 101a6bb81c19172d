"""The forests one server offers: ``--forest DIR`` (one) or ``--root DIR`` (every
forest directly under a folder, found when asked for, opened on first use).

A forest's name is its folder's name. A name from a request is only ever looked
up among the folders found here, never joined onto a path, so no request can
reach a folder outside the root.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Iterable

from monkeyllm_core import VineError, is_forest, parse_node

from .forest_service import ForestService


class Forests:
    def __init__(self, *, forest: Path | None = None, root: Path | None = None, readonly: bool = False,
                 inline: bool = False) -> None:
        """``inline``: the one forest's calls run on the caller's thread (stdio, one
        client: ``ForestService``); only with ``forest``."""
        if (forest is None) == (root is None):
            raise ValueError("serve one forest or a root of forests, not both or neither")
        if inline and forest is None:
            raise ValueError("only a forest served alone runs inline: a root's forests each get a thread")
        self.readonly = readonly
        self._inline = inline
        self._single = Path(forest).resolve() if forest is not None else None
        self._root = Path(root).resolve() if root is not None else None
        if self._single is not None and not is_forest(self._single):
            raise VineError("E_NOT_A_FOREST", f"{self._single} is not a forest",
                            "Run `vine init --forest DIR --title TITLE` to create one, or check the path.")
        if self._root is not None and not self._root.is_dir():
            raise VineError("E_NOT_FOUND", f"{self._root} is not a folder", "--root names a folder of forests.")
        self._services: dict[str, ForestService] = {}
        self._lock = threading.Lock()

    @property
    def single(self) -> bool:
        return self._single is not None

    def paths(self) -> dict[str, Path]:
        """Every forest offered now, by name."""
        if self._single is not None:
            return {self._single.name: self._single}
        assert self._root is not None
        return {p.name: p for p in sorted(self._root.iterdir())
                if p.is_dir() and not p.name.startswith(".") and is_forest(p)}

    def service(self, name: str | None) -> ForestService:
        """The served forest called ``name`` (None: the only one), opened on first use."""
        paths = self.paths()
        if name is None:
            if len(paths) != 1 or not self.single:
                raise VineError("E_SCHEMA", "this server offers several forests: name one",
                                f"Pass forest=...; forests: {', '.join(paths) or 'none yet'}.")
            name = next(iter(paths))
        if name not in paths:
            raise VineError("E_NOT_FOUND", f"no forest named {name!r} here",
                            f"Forests: {', '.join(paths) or 'none'}.")
        with self._lock:
            service = self._services.get(name)
            if service is None:
                service = self._services[name] = ForestService(name, paths[name], readonly=self.readonly,
                                                                       inline=self._inline)
            return service

    def listing(self, allowed: Iterable[str] | None = None) -> dict[str, Any]:
        """The ``forests`` answer: each offered forest's name and title (its master index's)."""
        visible = None if allowed is None else set(allowed)
        forests = []
        for name, path in self.paths().items():
            if visible is not None and name not in visible:
                continue
            forests.append({"name": name, "title": _title(path), "readonly": self.readonly})
        return {"forests": forests}

    def close(self) -> None:
        with self._lock:
            services, self._services = list(self._services.values()), {}
        for service in services:
            service.close()


def _title(root: Path) -> str:
    try:
        return str(parse_node((root / "_index.md").read_text(encoding="utf-8")).frontmatter.get("title", root.name))
    except (OSError, UnicodeDecodeError, VineError):
        return root.name
