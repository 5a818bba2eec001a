"""Folders walked and made without recursion: `os.walk` and `Path.mkdir(parents=True)` call
themselves once per level, so a folder nested 1,900 deep (a real path of under 4 KiB) raised
RecursionError. These loops take any depth the file system allows."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path


def walk(top: Path | str, onerror: Callable[[OSError], None] | None = None
         ) -> Iterator[tuple[str, list[str], list[str]]]:
    """`os.walk(top)` top-down with a stack instead of recursion: a link to a folder is listed
    in `dirnames` but not entered. As with `os.walk`, the caller may prune `dirnames` in place."""
    stack = [os.fspath(top)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError as exc:
            if onerror is not None:
                onerror(exc)
            continue
        dirnames: list[str] = []
        filenames: list[str] = []
        links: set[str] = set()
        for de in entries:
            try:
                is_dir = de.is_dir()
                if is_dir and de.is_symlink():
                    links.add(de.name)
            except OSError:
                is_dir = False
            (dirnames if is_dir else filenames).append(de.name)
        yield folder, dirnames, filenames
        stack.extend(os.path.join(folder, d) for d in reversed(dirnames) if d not in links)


def make_folders(path: Path | str) -> None:
    """`Path(path).mkdir(parents=True, exist_ok=True)`, one level at a time."""
    path = os.fspath(path)
    missing = []
    here = path
    while here and not os.path.isdir(here):
        missing.append(here)
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder)
        except FileExistsError:
            if not os.path.isdir(folder):
                raise
