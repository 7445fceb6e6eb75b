"""Where a command may write: never into a folder holding files tracked by git.

Committed reference data (reports/h100 ...) is never overwritten, and a report or a run's logs must
not dirty a checkout. One rule for every command that writes (gpuprobe-analyze report, profile -o,
compare -o, fleet -o, and scripts/main_job.sh, which asks this module: `python3 -m
gpuprobe_analysis.outputs PATH`).

The rule: a path git ignores (reports/local/...) is accepted, even where its nearest existing folder
holds tracked files (reports/ on a fresh clone). Otherwise the path itself, if it exists, and each
existing folder above it below the checkout's root must hold no tracked file of its own (its
subfolders' files do not count: reports/ may hold reports/h100/). Outside a git checkout, or without
git, everything is accepted.
"""
from __future__ import annotations

import os
import subprocess
import sys
from typing import List, Optional, Tuple


def _git(folder: str, *args: str) -> Tuple[int, str]:
    try:
        r = subprocess.run(["git", "-C", folder, *args], capture_output=True, text=True)
    except OSError:  # no git: nothing can be tracked
        return 128, ""
    return r.returncode, r.stdout


def _same(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def tracked_folder(path: str) -> Optional[str]:
    """The folder (spelled from `path`, e.g. reports/h100) whose tracked files writing to `path` would
    mix with, or None when the path is free."""
    path = os.path.normpath(path)
    existing = path
    while not os.path.isdir(existing) and existing not in ("", ".", os.sep):
        existing = os.path.dirname(existing) or "."
    # A folder git ignores never holds committed data. Asked as a folder ("DIR/"): a pattern for
    # folders (/reports/local/) matches a path that does not exist yet only when it ends in '/'.
    if os.path.isdir(existing or ".") and _git(existing or ".", "check-ignore", "-q", "--",
                                                os.path.relpath(path, existing or ".") + "/")[0] == 0:
        return None
    d = path
    while True:
        if os.path.isdir(d):
            rc, top = _git(d, "rev-parse", "--show-toplevel")
            if rc == 0:
                top = top.strip()
                # ':(glob)*' matches the folder's own files, not its subfolders'.
                if (d == path or not _same(d, top)) and _git(d, "ls-files", "--", ":(glob)*")[1].strip():
                    return d
                if _same(d, top):
                    return None
        if d in (".", os.sep, ""):
            return None
        d = os.path.dirname(d) or "."


def refuse_tracked_output(path: str) -> Optional[str]:
    """Why writing to the folder `path` is refused ("PATH would write into DIR, which holds files tracked
    by git ...; choose another folder, e.g. ..."), or None when it may be written."""
    folder = tracked_folder(path)
    if folder is None:
        return None
    instead = os.path.join("reports", "local", os.path.basename(os.path.realpath(path)))
    return (f"{path} would write into {folder}, which holds files tracked by git (committed data); choose another "
            f"folder, e.g. {instead} (ignored by git)")


def main(argv: Optional[List[str]] = None) -> int:
    """PATH -> exit 0 (may be written) or 1, printing the reason and the tracked folder on two lines."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python3 -m gpuprobe_analysis.outputs PATH", file=sys.stderr)
        return 2
    why = refuse_tracked_output(argv[0])
    if why is None:
        return 0
    print(why)
    print(tracked_folder(argv[0]))
    return 1


if __name__ == "__main__":
    sys.exit(main())
