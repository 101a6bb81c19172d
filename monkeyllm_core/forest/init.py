"""``vine init``: a new forest exactly as FOREST-FORMAT.md lays it out.

Master ``_index.md``, the dialect ``_meta/schema.md``, ``.gitignore``, the forest's
own git repository (also inside another repository) and one commit.

The repository is the one ``DIR`` is the top level of (also a worktree or a
submodule, whose ``.git`` is a file), else a new SHA-1 one (``gitrepo.init_repo``):
a SHA-256 repository is refused before a file is written, since the writer's packs
are SHA-1.
"""
from __future__ import annotations

import os
from pathlib import Path

from . import branches as br
from ..store import repo as gitrepo, history as gitstore
from ..store.messages import one_line
from .dialect import SCHEMA_PATH
from ..errors import VineError
from .passport import render_node
from .rules import MASTER_ID
from ..vine import is_forest, today


def init_forest(root: str | os.PathLike[str], title: str, summary: str | None = None) -> Path:
    """Create a forest: master index, dialect, .gitignore, its own repo, one commit."""
    from .dialect import default_schema_body
    root_path = Path(root).resolve()
    if (root_path / "_index.md").exists() or is_forest(root_path):
        raise VineError("E_EXISTS", f"{root_path} is already a forest",
                        "Use the existing forest, or choose an empty directory.")
    if not title or not title.strip():
        raise VineError("E_FRONTMATTER", "a forest needs a title", "Pass --title.")
    summary = summary or f"Master index of the forest '{one_line(title)}'."  # the title may hold escapes
    from .summary_contract import check_summary
    check_summary(summary, where="--summary")
    root_path.mkdir(parents=True, exist_ok=True)
    repo = gitrepo.init_repo(root_path)  # refuses a repository vine cannot write, before any file
    now = today()
    master = {"id": MASTER_ID, "type": "branch", "title": title, "summary": summary,
              "created": now, "updated": now, "source": "manual",
              "coverage": br.coverage_text(0, 0)}
    schema = {"id": "_meta/schema", "type": "note", "title": "Dialect",
              "summary": "The node types and edge rels this forest accepts, with their inverses.",
              "created": now, "updated": now, "source": "manual"}
    ignored = ["_derived/", ".vine.lock", "*.db", "*.sqlite", "*.sqlite3", "_assets/", "_meta/gardener.yaml",
               "*.vine-tmp", "*.vine-new", "*.vine-old"]
    # an existing repository keeps its own ignore rules; ours are added after them
    existing = (root_path / ".gitignore").read_text(encoding="utf-8") if (root_path / ".gitignore").is_file() else ""
    have = set(existing.splitlines())
    gitignore = (existing.rstrip("\n") + "\n" if existing.strip() else "") + \
        "".join(f"{line}\n" for line in ignored if line not in have)
    files = {
        ".gitignore": gitignore,
        "_index.md": render_node(master, br.branch_body(title, summary, master=True)),
        SCHEMA_PATH: render_node(schema, default_schema_body()),
    }
    committer = gitstore.Committer(root_path, repo)  # refuses a detached HEAD before a file is written
    for rel, text in files.items():
        path = root_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    committer.commit(f"init: forest '{one_line(title)}'", {rel: text.encode() for rel, text in files.items()})
    committer.close()
    # mark the files as fresh in the index so `git status` is clean straight away
    gitstore.run_git(root_path, "update-index", "-q", "--refresh", check=False)
    return root_path
