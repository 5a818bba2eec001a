"""Helpers for end-to-end tests through pytest-lsp: starting a session, sending edits, waiting
for pushed diagnostics, and a client that applies workspace edits to disk. Roots: `roots.py`."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from roots import summary_file

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "pmem_lsp"])


def uri(path: Path) -> str:
    return path.as_uri()


async def start(client: LanguageClient, root: Path, profile: str = "neovim",
                settings: dict | None = None) -> lsp.InitializeResult:
    # A client that says it supports lens refreshes (VS Code's profile) answers the server's
    # `workspace/codeLens/refresh`, as VS Code does; a test that counts them registers its own.
    if lsp.WORKSPACE_CODE_LENS_REFRESH not in client.protocol.fm.features:
        client.feature(lsp.WORKSPACE_CODE_LENS_REFRESH)(lambda _params: None)
    return await client.initialize_session(lsp.InitializeParams(
        capabilities=client_capabilities(profile),
        workspace_folders=[lsp.WorkspaceFolder(uri=uri(root), name=root.name)],
        initialization_options={"pmem": settings} if settings else None,
    ))


async def wait_for(client: LanguageClient, predicate: Callable[[], bool], timeout: float = 60.0) -> None:
    """Poll the diagnostics the client has received until `predicate` holds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s (a generous bound); diagnostics so far: {summarise(client)}")
        await asyncio.sleep(0.02)


async def watching(client: LanguageClient, root: Path, timeout: float = 60.0) -> Path:
    """Return once the server watches `root` for changes on disk. It starts watching after its
    first scan, and a change made in between is never seen (a race of the server's, not of the
    tests): so a canary note is written until the server reports it, then changed until the
    change shows, which only the watcher can bring. The canary, `notes/watch-canary.md`, stays:
    unrouted, with a two-bullet summary (PM102, PM202)."""
    canary = root / "notes" / "watch-canary.md"
    canary.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout
    for bullets, expected in ((4, ["PM202"]), (2, ["PM102", "PM202"])):
        text = summary_file("Watch canary", bullets=bullets)
        while codes(client, canary) != expected:
            if time.monotonic() > deadline:
                raise AssertionError(f"{root} is not watched; diagnostics so far: {summarise(client)}")
            canary.write_text(text, encoding="utf-8")
            for _ in range(5):
                await asyncio.sleep(0.02)
                if codes(client, canary) == expected:
                    break
    return canary


def codes(client: LanguageClient, path: Path) -> list[str]:
    return sorted(str(d.code) for d in client.diagnostics.get(uri(path), []))


def summarise(client: LanguageClient) -> dict[str, list[str]]:
    return {u.rsplit("/", 2)[-2] + "/" + u.rsplit("/", 1)[-1]: [str(d.code) for d in ds]
            for u, ds in client.diagnostics.items()}


def open_doc(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    text = path.read_text(encoding="utf-8") if text is None else text
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=uri(path), language_id="markdown", version=version, text=text)))
    return text


def replace_all(client: LanguageClient, path: Path, text: str, version: int) -> None:
    """A full-text change, as clients send for a paste or a formatter run."""
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri(path), version=version),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)]))


def edit(client: LanguageClient, path: Path, line: int, start: int, end_line: int, end: int,
         new_text: str, version: int) -> None:
    """An incremental change of a range, as editors send for typing."""
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri(path), version=version),
        content_changes=[lsp.TextDocumentContentChangePartial(
            range=lsp.Range(start=lsp.Position(line=line, character=start),
                            end=lsp.Position(line=end_line, character=end)),
            text=new_text)]))


@dataclass
class Session:
    """A started session shared by a module's tests (`shared` in conftest.py)."""

    client: LanguageClient
    root: Path
    result: lsp.InitializeResult
    ui: DiskClient


class DiskClient:
    """What a real client does with `workspace/applyEdit` and `window/showMessageRequest`,
    applied straight to disk (as if the user saved at once), with a scripted answer.

    Renames follow Neovim: a rename onto an existing file is skipped, yet `applied: true`.
    """

    def __init__(self, client: LanguageClient, answer: str | None, encoding: str = "utf-16") -> None:
        self.answer = answer
        self.encoding = encoding
        self.requests: list[lsp.ShowMessageRequestParams] = []
        self.edits: list[lsp.WorkspaceEdit] = []
        # pygls tags handlers with attributes, which bound methods cannot take: wrap them.
        client.feature(lsp.WINDOW_SHOW_MESSAGE_REQUEST)(lambda params: self._ask(params))
        client.feature(lsp.WORKSPACE_APPLY_EDIT)(lambda params: self._apply(params))

    def _ask(self, params: lsp.ShowMessageRequestParams):
        self.requests.append(params)
        for action in params.actions or []:
            if action.title == self.answer:
                return action
        return None

    def _offset(self, text: str, pos: lsp.Position) -> int:
        lines = text.split("\n")
        start = sum(len(line) + 1 for line in lines[:pos.line])
        line = lines[pos.line] if pos.line < len(lines) else ""
        units, chars = 0, 0
        for ch in line:
            if units >= pos.character:
                break
            units += {"utf-8": len(ch.encode("utf-8")), "utf-16": len(ch.encode("utf-16-le")) // 2}.get(self.encoding, 1)
            chars += 1
        return start + chars

    def _apply(self, params: lsp.ApplyWorkspaceEditParams):
        from pygls.uris import to_fs_path

        self.edits.append(params.edit)
        for change in params.edit.document_changes or []:
            if isinstance(change, lsp.RenameFile):
                old, new = Path(to_fs_path(change.old_uri)), Path(to_fs_path(change.new_uri))
                if new.exists() or not old.exists():
                    continue  # skipped, like Neovim, which still answers applied: true
                new.parent.mkdir(parents=True, exist_ok=True)
                old.rename(new)
            elif isinstance(change, lsp.CreateFile):
                path = Path(to_fs_path(change.uri))
                if not path.exists():
                    path.write_text("", encoding="utf-8")
            elif isinstance(change, lsp.DeleteFile):
                Path(to_fs_path(change.uri)).unlink()
            elif isinstance(change, lsp.TextDocumentEdit):
                path = Path(to_fs_path(change.text_document.uri))
                text = path.read_bytes().decode("utf-8")
                for e in sorted(change.edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
                    a, b = self._offset(text, e.range.start), self._offset(text, e.range.end)
                    text = text[:a] + e.new_text + text[b:]
                path.write_bytes(text.encode("utf-8"))
        return lsp.ApplyWorkspaceEditResult(applied=True)


def action_commands(actions) -> list[lsp.Command]:
    """The commands of code actions as the server sent them.

    lsprotocol's client-side hook structures any item with a "command" key as a bare
    `Command`, so a `CodeAction` carrying a command arrives as `Command(command="{...}")`;
    undo that here (real clients read the JSON directly).
    """
    import ast

    out = []
    for a in actions or []:
        if isinstance(a, lsp.CodeAction):
            if a.command is not None:
                out.append(a.command)
        elif isinstance(a.command, str) and a.command.startswith("{"):
            raw = ast.literal_eval(a.command)
            out.append(lsp.Command(title=raw["title"], command=raw["command"], arguments=raw.get("arguments")))
        else:
            out.append(a)
    return out
