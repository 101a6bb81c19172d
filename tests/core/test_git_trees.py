"""The in-memory tree editor must produce exactly the trees git itself would write."""
from __future__ import annotations

import random
import subprocess
from pathlib import Path

from monkeyllm_core.store.trees import TreeCache

from _git_runs import git_bytes  # tests/core is on sys.path


def store_blob(repo: Path, data: bytes) -> str:
    return git_bytes(repo, "hash-object", "-w", "--stdin", input=data).decode().strip()


def git_tree_of(repo: Path, files: dict[str, str]) -> str:
    """What `git write-tree` makes of these paths and blobs: the oracle."""
    index = repo / ".git" / "oracle-index"
    index.unlink(missing_ok=True)
    lines = "".join(f"100644 {sha}\t{path}\0" for path, sha in files.items())
    env_git = ["env", f"GIT_INDEX_FILE={index}", "git"]
    subprocess.run([*env_git, "update-index", "-z", "--index-info"], cwd=repo, input=lines.encode(), check=True)
    return subprocess.run([*env_git, "write-tree"], cwd=repo, capture_output=True, check=True).stdout.decode().strip()


def writer_for(repo: Path, written: list[str]):
    def write_tree(folder: str, content: bytes) -> str:
        written.append(folder)
        return git_bytes(repo, "hash-object", "-w", "-t", "tree", "--stdin", input=content).decode().strip()
    return write_tree


def loader_for(repo: Path):
    return lambda sha: git_bytes(repo, "cat-file", "tree", sha)


# names chosen to hit git's ordering rule: a folder sorts as if its name ended in "/"
TRICKY = ["a", "a.b", "a-b", "a0", "a/x.md", "a/y/z.md", "ab/c.md", "b.md", "a.b/c.md", "é.md", "Z.md", "_index.md"]


def test_random_edits_give_the_same_trees_as_git_write_tree(repo: Path) -> None:
    rng = random.Random(7)
    blobs = [store_blob(repo, f"content {i}\n".encode()) for i in range(5)]
    files: dict[str, str] = {}
    trees = TreeCache(None, loader_for(repo))
    written: list[str] = []
    for step in range(60):
        for _ in range(rng.randint(1, 4)):
            path = rng.choice(TRICKY + [f"notes/n{rng.randint(0, 30):02d}.md", f"deep/er/f{rng.randint(0, 5)}.md"])
            if path in files and rng.random() < 0.4:
                del files[path]
                trees.delete_file(path)
            elif not any(p.startswith(path + "/") or path.startswith(p + "/") for p in files):
                files[path] = rng.choice(blobs)
                trees.set_file(path, files[path])
        root = trees.store(writer_for(repo, written))
        assert root == git_tree_of(repo, files), f"step {step}: {sorted(files)}"
        if rng.random() < 0.3:  # a checkpoint: the folders no edit went through since the last one go
            trees.forget_untouched()
        if step % 20 == 19:  # a new session reads the committed trees back from git
            trees = TreeCache(root, loader_for(repo))


def test_only_the_trees_on_a_changed_path_are_rewritten(repo: Path) -> None:
    blob = store_blob(repo, b"x\n")
    files = {f"{folder}/n{i}.md": blob for folder in ("a", "b", "c") for i in range(3)}
    trees = TreeCache(None, loader_for(repo))
    for path, sha in files.items():
        trees.set_file(path, sha)
    written: list[str] = []
    root = trees.store(writer_for(repo, written))
    assert sorted(written) == ["", "a/", "b/", "c/"]
    reopened = TreeCache(root, loader_for(repo))
    written.clear()
    reopened.set_file("b/new.md", blob)
    files["b/new.md"] = blob
    assert reopened.store(writer_for(repo, written)) == git_tree_of(repo, files)
    assert written == ["b/", ""]


def test_a_folder_emptied_by_deletes_disappears(repo: Path) -> None:
    blob = store_blob(repo, b"x\n")
    trees = TreeCache(None, loader_for(repo))
    trees.set_file("keep.md", blob)
    trees.set_file("gone/only.md", blob)
    trees.store(writer_for(repo, []))
    trees.delete_file("gone/only.md")
    trees.delete_file("never/was.md")  # deleting what is not there changes nothing
    assert trees.store(writer_for(repo, [])) == git_tree_of(repo, {"keep.md": blob})


def test_a_file_and_a_folder_of_the_same_name_replace_each_other(repo: Path) -> None:
    blob = store_blob(repo, b"x\n")
    trees = TreeCache(None, loader_for(repo))
    trees.set_file("notes", blob)
    trees.store(writer_for(repo, []))
    trees.set_file("notes/a.md", blob)
    assert trees.store(writer_for(repo, [])) == git_tree_of(repo, {"notes/a.md": blob})
    trees.set_file("notes", blob)
    assert trees.store(writer_for(repo, [])) == git_tree_of(repo, {"notes": blob})


def test_entries_git_wrote_with_other_modes_are_kept(repo: Path) -> None:
    blob = store_blob(repo, b"#!/bin/sh\n")
    index = repo / ".git" / "index"
    subprocess.run(["git", "update-index", "--add", "--cacheinfo", f"100755,{blob},tools/run.sh"], cwd=repo, check=True)
    root = git_bytes(repo, "write-tree").decode().strip()
    index.unlink()
    trees = TreeCache(root, loader_for(repo))
    trees.set_file("tools/notes.md", blob)
    new_root = trees.store(writer_for(repo, []))
    listing = git_bytes(repo, "ls-tree", "-r", new_root).decode()
    assert f"100755 blob {blob}\ttools/run.sh" in listing
    assert f"100644 blob {blob}\ttools/notes.md" in listing


def test_a_folder_no_commit_went_through_is_dropped_and_read_again_when_needed(repo: Path) -> None:
    blob = store_blob(repo, b"note\n")
    loaded: list[str] = []
    load = loader_for(repo)
    trees = TreeCache(None, lambda sha: (loaded.append(sha), load(sha))[1])
    files = {f"{folder}/n{i}.md": blob for folder in ("done/deep", "busy") for i in range(3)}
    for path, sha in files.items():
        trees.set_file(path, sha)
    trees.store(writer_for(repo, []))
    trees.forget_untouched()  # both were written since the session began: kept
    assert set(trees.root.children) == {b"done", b"busy"}
    trees.set_file("busy/n9.md", blob)
    files["busy/n9.md"] = blob
    trees.store(writer_for(repo, []))
    trees.forget_untouched()  # "done" was not gone through since: dropped, with what is under it
    assert set(trees.root.children) == {b"busy"} and loaded == []
    trees.set_file("done/deep/n9.md", blob)  # read back from git, one tree per level
    files["done/deep/n9.md"] = blob
    assert len(loaded) == 2
    assert trees.store(writer_for(repo, [])) == git_tree_of(repo, files)
