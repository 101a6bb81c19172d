"""The history half of a snapshot: a git bundle of every ref, and a repository
made again from one.

``git bundle verify`` reads the header and the refs, not the pack: a bundle
with one flipped byte in its objects verifies. The pack is checked when it is
fetched (``index-pack`` checks every object's checksum; ``fsckObjects`` their
shape), so a restore fetches into a new repository before anything else counts
as restored.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import VineError
from ..store.history import GitError, run_git

PREFERRED_BRANCHES = ("refs/heads/main", "refs/heads/master")


@dataclass(frozen=True)
class BundleHeads:
    head: str                # the commit HEAD pointed at
    refs: dict[str, str]     # ref name -> commit, HEAD excluded

    def branch(self) -> str:
        """The branch to check out: the one HEAD was on. A bundle stores HEAD as a
        commit, not as a ref name, so when several branches point at that commit
        main, then master, then the first by name is taken (``git clone`` guesses
        the same way)."""
        candidates = sorted(ref for ref, sha in self.refs.items() if ref.startswith("refs/heads/") and sha == self.head)
        for ref in PREFERRED_BRANCHES:
            if ref in candidates:
                return ref
        if not candidates:
            raise VineError("E_CORRUPT", f"HEAD ({self.head[:12]}) is on no branch of the bundle",
                            "The bundle was not made by vine snapshot create; restore it with `git clone`.")
        return candidates[0]


def write_bundle(root: Path, target: Path) -> BundleHeads:
    """Bundle every ref of the forest at ``root`` into ``target`` and verify it."""
    run_git(root, "bundle", "create", str(target), "--all")
    run_git(root, "bundle", "verify", str(target))
    return read_heads(root, target)


def read_heads(root: Path, bundle: Path) -> BundleHeads:
    head, refs = None, {}
    for line in run_git(root, "bundle", "list-heads", str(bundle)).splitlines():
        sha, _, ref = line.partition(" ")
        if ref == "HEAD":
            head = sha
        elif ref:
            refs[ref] = sha
    if head is None:
        raise VineError("E_CORRUPT", f"{bundle.name} has no HEAD", "Make the bundle with vine snapshot create.")
    return BundleHeads(head, refs)


def clone_bundle(bundle: Path, repo_root: Path) -> BundleHeads:
    """Fetch every ref of ``bundle`` into the new, empty repository at
    ``repo_root``, put HEAD on its branch and check it out. A truncated or altered
    bundle is one line naming it."""
    try:
        run_git(repo_root, "bundle", "verify", str(bundle))
        heads = read_heads(repo_root, bundle)
        run_git(repo_root, "-c", "fetch.fsckObjects=true", "fetch", "-q", "--no-tags", "--update-head-ok",
                str(bundle), "refs/*:refs/*")
        branch = heads.branch()
        run_git(repo_root, "symbolic-ref", "HEAD", branch)
        run_git(repo_root, "reset", "-q", "--hard", heads.head)
    except GitError as exc:
        raise VineError("E_CORRUPT", f"{bundle} is not a whole forest snapshot: {_git_said(exc)}",
                        "It is truncated or altered: restore from another copy of the snapshot.") from None
    return heads


def _git_said(exc: GitError) -> str:
    """git's first complaint, without its advice lines."""
    text = str(exc)
    lines = [line.strip() for line in text.split(": ", 1)[-1].splitlines() if line.strip()]
    return next((line for line in lines if line.startswith(("fatal:", "error:"))), lines[0] if lines else text)
