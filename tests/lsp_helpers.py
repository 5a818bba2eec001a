"""Helpers for end-to-end tests: temporary roots on disk and waiting for pushed diagnostics."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Callable

from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "pmem_lsp"])


def write_root(base: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = base / rel
        if rel.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return base


def summary_file(title: str, bullets: int = 4, extra: str = "") -> str:
    items = "\n".join(f"- fact number {i + 1} about {title.lower()}" for i in range(bullets))
    return f"# {title}\n\nStatus: active\n\n## Summary\n{items}\n\n## Details\n\nBody text.\n{extra}"


def base_files() -> dict[str, str]:
    """A well-formed root: core, index routing every active file, lifecycle structure."""
    return {
        "_core/profile.md": "# Profile\n\nName: Test Person\n",
        "_core/preferences.md": "# Preferences\n\n- short answers\n",
        "_index.md": "# Memory index\n\n## Projects\n- [Alpha](projects/alpha.md) — the alpha project\n",
        "projects/alpha.md": summary_file("Alpha"),
        "_archive/_trash/": "",
        "_archive/_index.md": "# Archive index\n",
    }


def uri(path: Path) -> str:
    return path.as_uri()


async def start(client: LanguageClient, root: Path, profile: str = "neovim",
                settings: dict | None = None) -> lsp.InitializeResult:
    return await client.initialize_session(lsp.InitializeParams(
        capabilities=client_capabilities(profile),
        workspace_folders=[lsp.WorkspaceFolder(uri=uri(root), name=root.name)],
        initialization_options={"pmem": settings} if settings else None,
    ))


async def wait_for(client: LanguageClient, predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Poll the diagnostics the client has received until `predicate` holds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out; diagnostics so far: {summarise(client)}")
        await asyncio.sleep(0.02)


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
