"""Which memory roots this session serves, with which settings, and their background scans."""

from __future__ import annotations

import asyncio
import gc
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from ..engine.analysis import Analysis
from ..engine.env_seconds import env_seconds
from ..engine.host import MemoryRoot
from ..engine.host import scan as host_scan
from ..engine.root_state import RootState
from ..engine.settings import Settings, SettingsError, resolve_settings
from ..engine.settings_defaults import SETTINGS_FILE
from ..engine.zones import discover_root, looks_like_root
from .session import candidate_roots, editor_settings, folder_paths
from .watcher import stop_watching, watch_root

if TYPE_CHECKING:
    from .app import PmemServer

log = logging.getLogger(__name__)


def configure_roots(server: PmemServer, folders: list[Path]) -> None:
    """(Re)build the host's roots from the workspace folders and the editor's settings."""
    overrides = dict(server.editor_settings)
    configured = overrides.pop("root", None)
    configured = configured if isinstance(configured, str) else None
    if configured and not looks_like_root(discover_root(configured)):
        server.warn(f"pmem: pmem.root {discover_root(configured)} does not look like a memory root "
                    "(no _index.md, _core/ or _archive/); ignored")
    wanted = candidate_roots(folders, configured)
    for root in list(server.host.roots):
        if root.path not in wanted:
            drop_root(server, root)
    for path in wanted:
        settings, problem = root_settings(path, overrides)
        # Said once: a settings change or a folder change configures the roots again.
        if problem is None:
            server.settings_warned.pop(path, None)
        elif server.settings_warned.get(path) != problem:
            server.settings_warned[path] = problem
            server.warn(problem)
        server.host.add_root(path, settings)
    server.log(f"pmem: memory roots: {', '.join(str(r.path) for r in server.host.roots) or 'none'}")


def root_settings(path: Path, overrides: dict) -> tuple[Settings, str | None]:
    """The settings `path` is checked with, and what to tell the user when they are not the
    ones asked for: one message that says what is wrong and what the server does instead.
    A root whose own `.pmem.toml` cannot be used (not TOML, a bad value, a folder,
    unreadable) is checked with the defaults, and every write pmem would make to it is
    refused (`usable_settings`, `settings-usable`) until the file is fixed; editor settings
    that cannot be used are left out, and the root's own settings apply."""
    try:
        own = resolve_settings(path)
    except SettingsError as exc:
        return Settings(), (f"pmem: {exc}. This root is checked with the default settings, and pmem refuses "
                            f"to change anything in it (upgrade, archive, delete, recover, purge) "
                            f"until {SETTINGS_FILE} is fixed")
    if not overrides:
        return own, None
    try:
        return resolve_settings(path, overrides), None
    except SettingsError as exc:
        return own, f"pmem: {exc}; the editor's pmem settings are not used for {path}: its own settings are"


def drop_root(server: PmemServer, root: MemoryRoot) -> None:
    """A root is no longer served: forget it and clear everything it had published."""
    server.host.remove_root(root.path)
    server.scan_done.pop(root.path, None)
    stop_watching(server, root)
    server.publisher.dropped(root)


def workspace_folders(params: lsp.InitializeParams) -> list[Path]:
    return folder_paths([f.uri for f in params.workspace_folders or []], params.root_uri, params.root_path)


def configuration_wait() -> float:
    """Seconds the full server waits for the client's configuration answer."""
    return env_seconds("PMEM_CONFIGURATION_WAIT", 10.0, minimum=0.1)


async def fetch_configuration(server: PmemServer) -> None:
    """Ask the client for the `pmem` section, when it can answer."""
    caps = server.client_capabilities.workspace
    if caps is None or not caps.configuration:
        return
    wait = configuration_wait()
    try:
        result = await asyncio.wait_for(server.workspace_configuration_async(
            lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="pmem")])
        ), wait)
    except TimeoutError:
        # A client that never answers would otherwise keep every root unconfigured and unscanned
        # for the whole session (a review). Its initialization options and `.pmem.toml` decide;
        # a later `didChangeConfiguration` asks again.
        log.warning("workspace/configuration was not answered in %.0f s: using the initialization "
                    "options and .pmem.toml", wait)
        return
    except Exception as exc:  # a client that fails this request still gets diagnostics
        log.warning("workspace/configuration failed: %s", exc)
        return
    if result and isinstance(result[0], dict):
        # Rebuilt from the base layer each time, so a setting the user removed stops applying.
        merged = dict(server.init_settings)
        merged.update(editor_settings(result[0]))
        server.editor_settings = merged


async def scan_all(server: PmemServer) -> None:
    for root in list(server.host.roots):
        await scan_root(server, root)


def _scan_and_analyse(root_path: Path, settings: Settings) -> tuple[RootState, Analysis]:
    return host_scan(root_path, settings)  # unchanged files from the per-file records (engine/entry_cache.py)


PROGRESS_AFTER = 0.5  # seconds: a scan that takes longer shows work-done progress (PMEM_PROGRESS_AFTER)


async def _progress_after_delay(server: PmemServer, root: MemoryRoot, token: str) -> None:
    from ..engine.env_seconds import env_seconds

    # Read when the scan starts: a test shows progress for any scan (0), whatever the machine's speed.
    await asyncio.sleep(env_seconds("PMEM_PROGRESS_AFTER", PROGRESS_AFTER))
    caps = server.client_capabilities.window
    if caps is None or not caps.work_done_progress:
        return
    try:
        await server.work_done_progress.create_async(token)
    except Exception as exc:  # a client that refuses progress still gets the diagnostics
        log.info("work-done progress refused: %s", exc)
        return
    server.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(
        title="pmem", message=f"checking {root.path.name}", cancellable=False))
    server.progress_tokens.add(token)


async def scan_root(server: PmemServer, root: MemoryRoot) -> None:
    """Scan and analyse in a worker thread so the loop keeps answering; install and publish
    on the loop. The root is watched for changes made outside the editor from before the scan
    starts: a change the scan may have missed (made after it read the file) is read again
    when the scan is installed. A scan that takes longer than half a second shows work-done
    progress."""
    server.host.scan_started(root)
    watch_root(server, root)
    await asyncio.sleep(0)  # the watcher's first step sets up its watches before the scan reads
    token = f"pmem-scan-{id(root)}-{asyncio.get_running_loop().time()}"
    progress = asyncio.ensure_future(_progress_after_delay(server, root, token))
    try:
        state, analysis = await asyncio.to_thread(_scan_and_analyse, root.path, root.settings)
    finally:
        progress.cancel()
        if token in server.progress_tokens:
            server.progress_tokens.discard(token)
            server.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message="done"))
    if root not in server.host.roots:
        return  # dropped while scanning
    rescan = root.state is not None
    server.publisher.disk_analysed(root, analysis.final)  # before the buffers' edits are put on it
    installed = server.host.install(root, state, analysis)
    # The scan's objects live as long as the root: moved out of the collector's reach, so a
    # full collection (200+ ms on a 10k-file root) never lands on a keystroke. A rescan (new
    # settings) first lets the collector have what the old state left.
    if rescan:
        gc.unfreeze()
        gc.collect()
    gc.freeze()
    server.scan_event(root).set()
    server.publisher.scanned(root, installed)  # publishes, and logs unreadable and capped files
