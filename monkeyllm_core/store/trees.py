"""The writer's in-memory copy of the branch's git trees, edited one entry at a time.

A commit needs the tree of every folder on the changed paths. Rebuilding a tree
from a listing costs time proportional to the folder; a branch can hold thousands
of nodes, so each tree is kept as git's own serialization (``bytearray``) with the
entries' sort keys beside it, and a change splices one entry in or out. Only the
trees on a written path are ever loaded (from git, once per session).

Git orders a tree's entries by name, a sub-tree's name compared as if it ended in
``/``; the sort keys here are exactly that, so ``bisect`` finds an entry's place.
"""
from __future__ import annotations

import bisect
from typing import Callable

TREE_MODE = b"40000"
FILE_MODE = b"100644"

Loader = Callable[[str], bytes]  # tree sha (hex) -> the tree object's raw content


class Tree:
    """One folder's tree: its serialized entries, their sort keys and byte lengths."""

    __slots__ = ("data", "keys", "lens", "children", "dirty_children", "sha", "touched")

    def __init__(self, data: bytes = b"", sha: str | None = None) -> None:
        self.data = bytearray(data)
        self.keys: list[bytes] = []
        self.lens: list[int] = []
        self.children: dict[bytes, Tree] = {}  # sub-trees loaded so far, by name
        self.dirty_children: set[bytes] = set()
        self.sha = sha  # None while the tree differs from any stored object
        self.touched = True  # a commit went through it since the last ``forget_untouched``
        pos, end = 0, len(data)
        while pos < end:
            space = data.index(b" ", pos)
            nul = data.index(b"\0", space)
            name = data[space + 1:nul]
            is_tree = data[pos:space] == TREE_MODE
            self.keys.append(name + b"/" if is_tree else name)
            self.lens.append(nul + 21 - pos)
            pos = nul + 21

    def __len__(self) -> int:
        return len(self.keys)

    def _offset(self, index: int) -> int:
        return sum(self.lens[:index])

    def find(self, key: bytes) -> int | None:
        i = bisect.bisect_left(self.keys, key)
        return i if i < len(self.keys) and self.keys[i] == key else None

    def entry_sha(self, index: int) -> str:
        end = self._offset(index) + self.lens[index]
        return bytes(self.data[end - 20:end]).hex()

    def put(self, mode: bytes, name: bytes, sha: str) -> None:
        """Add the entry, or replace the one with the same name and kind."""
        key = name + b"/" if mode == TREE_MODE else name
        entry = mode + b" " + name + b"\0" + bytes.fromhex(sha)
        i = bisect.bisect_left(self.keys, key)
        offset = self._offset(i)
        if i < len(self.keys) and self.keys[i] == key:
            self.data[offset:offset + self.lens[i]] = entry
            self.lens[i] = len(entry)
        else:
            self.data[offset:offset] = entry
            self.keys.insert(i, key)
            self.lens.insert(i, len(entry))
        self.sha = None

    def remove(self, key: bytes) -> bool:
        i = self.find(key)
        if i is None:
            return False
        offset = self._offset(i)
        del self.data[offset:offset + self.lens[i]]
        del self.keys[i]
        del self.lens[i]
        self.sha = None
        return True


class TreeCache:
    """The root tree of the writer's last commit and the sub-trees it has touched."""

    def __init__(self, root_sha: str | None, load: Loader) -> None:
        self._load = load
        self.root = Tree(load(root_sha), root_sha) if root_sha else Tree()

    def _subtree(self, parent: Tree, name: bytes, *, create: bool) -> Tree | None:
        child = parent.children.get(name)
        if child is not None:
            child.touched = True
            return child
        i = parent.find(name + b"/")
        if i is not None:
            sha = parent.entry_sha(i)
            child = Tree(self._load(sha), sha)
        elif create:
            parent.remove(name)  # a file of that name gives way to the folder
            child = Tree()
        else:
            return None
        parent.children[name] = child
        return child

    def set_file(self, path: str, blob_sha: str) -> None:
        *folders, name = path.encode("utf-8", "surrogateescape").split(b"/")
        tree = self.root
        for folder in folders:
            tree.dirty_children.add(folder)
            tree.sha = None
            tree = self._subtree(tree, folder, create=True)  # type: ignore[assignment]
        if name in tree.children or tree.find(name + b"/") is not None:
            tree.children.pop(name, None)  # the folder of that name gives way to the file
            tree.dirty_children.discard(name)
            tree.remove(name + b"/")
        tree.put(FILE_MODE, name, blob_sha)

    def delete_file(self, path: str) -> None:
        *folders, name = path.encode("utf-8", "surrogateescape").split(b"/")
        trail = []
        tree = self.root
        for folder in folders:
            child = self._subtree(tree, folder, create=False)
            if child is None:
                return  # nothing there to delete
            trail.append((tree, folder))
            tree = child
        if tree.remove(name):
            for parent, folder in trail:
                parent.dirty_children.add(folder)
                parent.sha = None

    def forget_untouched(self) -> None:
        """Drop the sub-trees no commit has gone through since the last call. Each is
        stored (its id is in its parent's entry) and is read from git again if a later
        commit needs it: a long session keeps the folders it is writing in, not every
        folder it ever wrote in (a 50,000-file adopt walks its folders one by one).
        Call it only once the objects of every stored tree are where git reads them."""
        self._forget_untouched(self.root)

    def _forget_untouched(self, tree: Tree) -> None:
        for name, child in list(tree.children.items()):
            if not child.touched and child.sha is not None and name not in tree.dirty_children:
                del tree.children[name]
            else:
                child.touched = False
                self._forget_untouched(child)

    def store(self, write_tree: Callable[[str, bytes], str]) -> str:
        """Store every changed tree, sub-trees first; return the root tree's sha.
        ``write_tree(folder, content)`` stores one tree object and returns its sha."""
        return self._store(self.root, "", write_tree)

    def _store(self, tree: Tree, folder: str, write_tree: Callable[[str, bytes], str]) -> str:
        for name in sorted(tree.dirty_children):
            child = tree.children[name]
            sub = f"{folder}{name.decode('utf-8', 'surrogateescape')}/"
            child_sha = self._store(child, sub, write_tree)
            if len(child):
                tree.put(TREE_MODE, name, child_sha)
            else:  # git keeps no empty folders
                tree.remove(name + b"/")
                del tree.children[name]
        tree.dirty_children.clear()
        if tree.sha is None:
            tree.sha = write_tree(folder, bytes(tree.data))
        return tree.sha
