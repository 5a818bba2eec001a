"""Load (issue 9): a flood of incremental `didChange` at 200 per second on a 20 KB note, with
a hover every 50 ms. The server must keep answering, its memory must stay flat, and once
the flood stops the diagnostics it published must be those of the final text.

The flood lasts `PMEM_FLOOD_SECONDS` (4 s here, to keep `make test` short; the issue's 10 s
runs in the benchmark, benchmarks/flood_bench.py, which reuses `run_flood`). Every edit
comes from a fixed seed, and their number is `rate * seconds` whatever the machine's speed,
so the final text is the same on every run; only the timing varies.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from lsp_helpers import start, uri
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from roots import base_files, summary_file, write_root

FLOOD_SECONDS = float(os.environ.get("PMEM_FLOOD_SECONDS", "4"))
RATE = 200  # didChange per second
HOVER_EVERY = 10  # changes: a hover every 50 ms at the nominal rate
SEED = 9
NOTE = "notes/flood.md"

# -- the root and the note -------------------------------------------------------------------

PROSE = [
    "The team reviewed the dashboard, the budget and the release plan; decisions are recorded below.",
    "Café meetings on Thursdays moved to the naïve scheduler slot — nobody objected to the change.",
    "中文笔记：每周四下午开会，预算审核在月底完成，负责人确认后发布。",
    "Deploys wait for the nightly load 😀 to finish and for the owner to sign off the report.",
    "The pipeline owner rotates monthly; the current owner keeps the runbook and the on-call notes.",
    "Open question: whether the archive job should run before or after the weekly compaction.",
]
LINK_LINES = [
    "See [Alpha](../projects/alpha.md) for the pipeline and [Two](../projects/two.md) for the budget.",
    "The profile lives in [the profile](../_core/profile.md); preferences in [prefs](../_core/preferences.md).",
]
BULLETS = [
    "- The nightly load finishes by 06:00 and the owner reviews the report.",
    "- Budget reviews happen in the last week of each month.",
    "- Releases go out on Tuesdays after the dashboard is green.",
    "- The runbook lives beside the on-call notes in the team drive.",
]
DANGLING = "See [the old plan](old-plan.md) for how this started."
SECOND_SUMMARY = "## Summary"


def flood_note(size: int = 20_000) -> str:
    """A realistic 20 KB note: title, status, summary, details with links, related files."""
    lines = ["# Flood note", "", "Status: active", "", "## Summary", *BULLETS, "", "## Details", ""]
    k = 0
    while len("\n".join(lines).encode("utf-8")) < size - 400:
        if k % 9 == 8:
            lines.append(LINK_LINES[(k // 9) % len(LINK_LINES)])
        else:
            lines.append(f"Entry {k}: {PROSE[k % len(PROSE)]}")
        if k % 6 == 5:
            lines.append("")
        k += 1
    lines += ["", "## Related", "", "- [Alpha](../projects/alpha.md)", "- [Two](../projects/two.md)", ""]
    return "\n".join(lines)


def flood_root(base: Path) -> Path:
    """A handful of well-formed files and the note, routed from the index."""
    files = base_files()
    files["_index.md"] += ("- [Two](projects/two.md) — the budget\n"
                           "- [Flood note](notes/flood.md) — the note under load\n")
    files["projects/two.md"] = summary_file("Two")
    files["projects/gamma.md"] = summary_file("Gamma", extra="See [Alpha](alpha.md).\n")
    files["_index.md"] += "- [Gamma](projects/gamma.md) — the third project\n"
    files[NOTE] = flood_note()
    return write_root(base, files)


# -- positions in the client's units -----------------------------------------------------------

def units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)


def position(lines: list[str], line: int, col: int, encoding: str) -> lsp.Position:
    text = lines[line] if line < len(lines) else ""
    return lsp.Position(line=line, character=units(text[:col], encoding))


# -- the edits ---------------------------------------------------------------------------------

TYPED = "abcdefghijklmnopqrstuvwxyz      ,.0123456789"
DELETABLE = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ,.0123456789")


@dataclass
class Edit:
    line: int
    col: int
    end_line: int
    end_col: int
    text: str


class Editor:
    """The client's copy of the note and a seeded typist.

    Typing is single characters at a cursor that mostly stays put (a run of inserts, now and
    then a backspace) and sometimes jumps; it touches only prose and summary-bullet text, never
    a heading, a link line or Markdown syntax, so the note's structure (and every link a hover
    aims at) survives. About 3 % of the changes flip one of three planted findings with a
    multi-line edit: two summary bullets removed and restored (PM102), a dangling link line
    added and removed (PM402), a second `## Summary` heading added and removed (PM105).
    """

    def __init__(self, text: str, seed: int, encoding: str = "utf-16") -> None:
        self.lines = text.split("\n")
        self.encoding = encoding
        self.rng = random.Random(seed)
        self.cursor = (0, 0)
        self.removed_bullets: list[str] | None = None
        self.dangling = False
        self.second_summary = False
        self.toggles = 0
        self._jump()

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def _editable(self, i: int) -> int | None:
        """The first column typing may touch on line `i`, or None for a line it leaves alone."""
        line = self.lines[i]
        if not line or line.startswith("#") or "](" in line or line.startswith("Status:"):
            return None
        if line.startswith("- "):
            return 2
        return 0

    def _jump(self) -> None:
        while True:
            i = self.rng.randrange(len(self.lines))
            first = self._editable(i)
            if first is not None:
                self.cursor = (i, self.rng.randint(first, len(self.lines[i])))
                return

    def apply(self, e: Edit) -> lsp.Range:
        """Apply `e` to the client's text; return its range in the client's units (before it)."""
        rng = lsp.Range(start=position(self.lines, e.line, e.col, self.encoding),
                        end=position(self.lines, e.end_line, e.end_col, self.encoding))
        head = self.lines[e.line][:e.col]
        tail = self.lines[e.end_line][e.end_col:]
        self.lines[e.line:e.end_line + 1] = (head + e.text + tail).split("\n")
        return rng

    def _heading(self, title: str, nth: int = 1) -> int | None:
        seen = 0
        for i, line in enumerate(self.lines):
            if line == title:
                seen += 1
                if seen == nth:
                    return i
        return None

    def _toggle(self, plant: bool = False) -> Edit:
        """Flip one planted finding (`plant`: one that is off, when there is one)."""
        self.toggles += 1
        off = [name for name, on in (("bullets", self.removed_bullets is not None),
                                      ("dangling", self.dangling), ("summary", self.second_summary)) if not on]
        which = self.rng.choice(off if plant and off else ["bullets", "dangling", "summary"])
        summary = self._heading("## Summary")
        assert summary is not None
        if which == "bullets":
            last = summary + 1
            while self.lines[last].startswith("- "):
                last += 1
            if self.removed_bullets is None:  # drop the last two bullets: 2 left, PM102
                self.removed_bullets = self.lines[last - 2:last]
                return Edit(last - 2, 0, last, 0, "")
            restored, self.removed_bullets = self.removed_bullets, None
            return Edit(last, 0, last, 0, "\n".join(restored) + "\n")
        if which == "dangling":
            details = self._heading("## Details")
            assert details is not None
            if not self.dangling:
                self.dangling = True
                return Edit(details + 2, 0, details + 2, 0, DANGLING + "\n")
            self.dangling = False
            at = self.lines.index(DANGLING)
            return Edit(at, 0, at + 1, 0, "")
        related = self._heading("## Related")
        assert related is not None
        if not self.second_summary:
            self.second_summary = True
            return Edit(related, 0, related, 0, SECOND_SUMMARY + "\n\n")
        self.second_summary = False
        at = self._heading(SECOND_SUMMARY, nth=2)
        assert at is not None
        return Edit(at, 0, at + 2, 0, "")

    def next_edit(self, plant: bool = False) -> tuple[Edit, lsp.Range]:
        r = self.rng.random()
        if plant or r < 0.03:
            e = self._toggle(plant)
            rng = self.apply(e)
            self._jump()
            return e, rng
        if r < 0.05:
            self._jump()
        line, col = self.cursor
        first = self._editable(line)
        if first is None:  # a toggle moved the lines under the cursor
            self._jump()
            line, col = self.cursor
            first = self._editable(line)
        col = min(col, len(self.lines[line]))
        if self.rng.random() < 0.3 and col > first and self.lines[line][col - 1] in DELETABLE:
            e = Edit(line, col - 1, line, col, "")
            self.cursor = (line, col - 1)
        else:
            e = Edit(line, col, line, col, self.rng.choice(TYPED))
            self.cursor = (line, col + 1)
        return e, self.apply(e)

    def link_spans(self) -> list[tuple[int, int, int]]:
        """(line, start, end) of the target of every `[text](target)` in the note: the range
        a hover on the link answers with."""
        out = []
        for i, line in enumerate(self.lines):
            for m in re.finditer(r"\[[^\]\n]*\]\(([^)\s]+)\)", line):
                out.append((i, m.start(1), m.end(1)))
        return out


# -- the server's process ----------------------------------------------------------------------

def server_pid(client: LanguageClient) -> int:
    """pytest-lsp starts the server with asyncio's subprocess (no shell): its pid is the server's."""
    return client._server.pid  # type: ignore[union-attr]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    k = max(0, min(len(values) - 1, round(p / 100 * (len(values) - 1))))
    return values[k]


# -- what the engine says about the final text --------------------------------------------------

def expected_diagnostics(root: Path, rel: str, text: str, encoding: str) -> dict[str, list[tuple]]:
    """Findings of every file, computed in this process from a fresh scan of the root with
    `text` as the note's content (as the server holds it: a buffer over the disk's entry)."""
    from pmem_lsp.engine.analysis import Analysis
    from pmem_lsp.engine.root_state import RootState
    from pmem_lsp.engine.settings import resolve_settings

    state = RootState.scan(root, resolve_settings(root))
    state.set_buffer(rel, text)
    out: dict[str, list[tuple]] = {}
    for path, found in Analysis(state).by_path().items():
        lines = text.split("\n") if path == rel else state.doc(path).lines if state.doc(path) else []
        rows = []
        for f in found:
            a, b = position(lines, f.line, f.col, encoding), position(lines, f.end_line, f.end_col, encoding)
            rows.append((f.code, a.line, a.character, b.line, b.character, f.message))
        out[uri(root / path)] = sorted(rows)
    return out


def published_rows(diagnostics: list[lsp.Diagnostic]) -> list[tuple]:
    return sorted((str(d.code), d.range.start.line, d.range.start.character, d.range.end.line,
                   d.range.end.character, d.message) for d in diagnostics)


# -- the flood ---------------------------------------------------------------------------------

class ArrivalLog(dict):
    """`client.diagnostics`, which pytest-lsp fills one `publishDiagnostics` at a time, with
    the arrival time of each (how long the final diagnostics took, and how many were sent) and
    the document version each was published for (`versions`, filled by `record_versions`)."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.arrivals: list[tuple[float, str]] = []
        self.versions: list[tuple[str, int | None]] = []

    def __setitem__(self, uri: str, diagnostics) -> None:
        super().__setitem__(uri, diagnostics)
        self.arrivals.append((time.monotonic(), uri))

    def record_versions(self, client: LanguageClient) -> None:
        """Note each publication's version before pytest-lsp stores its diagnostics."""
        features = client.protocol.fm.features
        store = features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

        def recording(params: lsp.PublishDiagnosticsParams):
            self.versions.append((params.uri, params.version))
            return store(params)

        features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = recording


@dataclass
class FloodResult:
    seconds: float  # asked for
    duration_s: float = 0.0  # from the first change sent to the last
    changes: int = 0
    changes_per_s: list[int] = field(default_factory=list)  # sent in each second of the flood
    max_lag_ms: float = 0.0  # how far behind its schedule a change was sent, at worst
    toggles: int = 0
    hovers: int = 0
    hover_failures: list[str] = field(default_factory=list)  # timeouts, errors, wrong answers
    hover_ms: list[float] = field(default_factory=list)
    # (nominal seconds into the flood: changes sent / RATE, MB), sampled every RATE changes
    rss_mb: list[tuple[float, float]] = field(default_factory=list)
    rss_after_mb: float = float("nan")  # once the diagnostics settled
    server_cpu_s: float = 0.0  # during the flood
    settle_ms: float = float("nan")  # last change sent to the final diagnostics received
    note_publishes: int = 0  # diagnostics of the note received during the flood and after
    final_codes: list[str] = field(default_factory=list)
    diagnostics_match: bool = False
    mismatch: str = ""

    def summary(self) -> dict:
        return {
            "flood_seconds": self.seconds, "duration_s": round(self.duration_s, 2),
            "changes": self.changes, "changes_per_s": self.changes_per_s,
            "max_send_lag_ms": round(self.max_lag_ms, 1), "toggles": self.toggles,
            "hovers": self.hovers, "hover_failures": len(self.hover_failures),
            "hover_p50_ms": round(percentile(self.hover_ms, 50), 2) if self.hover_ms else None,
            "hover_p95_ms": round(percentile(self.hover_ms, 95), 2) if self.hover_ms else None,
            "hover_max_ms": round(max(self.hover_ms), 2) if self.hover_ms else None,
            "rss_mb": [(round(t, 1), round(mb, 1)) for t, mb in self.rss_mb],
            "rss_start_mb": round(self.rss_mb[0][1], 1) if self.rss_mb else None,
            "rss_end_mb": round(self.rss_mb[-1][1], 1) if self.rss_mb else None,
            "rss_after_mb": round(self.rss_after_mb, 1),
            "memory_flat": memory_verdict(self.rss_mb)[0],
            "server_cpu_share": round(self.server_cpu_s / self.duration_s, 2) if self.duration_s else None,
            "settle_ms": round(self.settle_ms, 1), "note_publishes": self.note_publishes,
            "final_codes": self.final_codes, "diagnostics_match": self.diagnostics_match,
        }


async def run_flood(client: LanguageClient, root: Path, encoding: str, seconds: float = FLOOD_SECONDS,
                    seed: int = SEED, settle_timeout: float = 60.0) -> FloodResult:
    """Open the note, flood it, then wait for the diagnostics to settle and compare them."""
    note = root / NOTE
    note_uri, index_uri = uri(note), uri(root / "_index.md")
    pid = server_pid(client)
    result = FloodResult(seconds)
    editor = Editor(note.read_text(encoding="utf-8"), seed, encoding)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
        uri=note_uri, language_id="markdown", version=1, text=editor.text)))
    index_lines = (root / "_index.md").read_text(encoding="utf-8").split("\n")
    route_line = next(i for i, line in enumerate(index_lines) if "notes/flood.md" in line)
    route_hover = lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=index_uri),
                                  position=lsp.Position(line=route_line, character=4))
    # The scan has landed when the index's route has a hover (before it, nothing has).
    deadline = time.monotonic() + 60
    while await client.text_document_hover_async(route_hover) is None:
        assert time.monotonic() < deadline, "the root was not scanned in 30 s"
        await asyncio.sleep(0.05)
    await _wait(lambda: note_uri in client.diagnostics, 10, "the note's first diagnostics")

    log = client.diagnostics = ArrivalLog(client.diagnostics)
    log.record_versions(client)
    pending: set[asyncio.Task] = set()

    def check_hover(kind: str, answer: lsp.Hover | None, want) -> str | None:
        if answer is None:
            return f"{kind}: no hover"
        if kind == "route":  # the card of the note: its size is the buffer's, as sent so far
            m = re.search(r"([\d,]+) bytes", answer.contents.value)
            size = int(m.group(1).replace(",", "")) if m else None
            return None if size == want else f"route: card says {size} bytes, the client's text has {want}"
        if kind == "link" and answer.range != want:
            return f"link: range {answer.range} != {want}"
        return None

    def hover(kind: str, doc: str, pos: lsp.Position, want) -> asyncio.Future:
        """Send a hover now (not on the task's first step: a change sent meanwhile would
        come first), and check its answer when it arrives."""
        sent = time.monotonic()
        answer = asyncio.wrap_future(client.text_document_hover(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=doc), position=pos)))
        return asyncio.ensure_future(receive(kind, sent, answer, want))

    async def receive(kind: str, sent: float, answer: asyncio.Future, want) -> None:
        # Not `wait_for`: cancelling pygls's future makes its reader fail on the late answer.
        # A generous bound (a starved server on a busy machine still answers well within it).
        done, _ = await asyncio.wait({answer}, timeout=60)
        if not done:
            result.hover_failures.append(f"{kind}: no answer in 60 s")
            return
        try:
            answer = answer.result()
        except Exception as exc:  # an error response
            result.hover_failures.append(f"{kind}: {exc!r}")
            return
        result.hover_ms.append((time.monotonic() - sent) * 1000)
        problem = check_hover(kind, answer, want)
        if problem:
            result.hover_failures.append(problem)

    def send_hover(k: int) -> None:
        kind = ("route", "link", "title")[k % 3]
        if kind == "route":
            args = (index_uri, lsp.Position(line=route_line, character=4), len(editor.text.encode("utf-8")))
        elif kind == "link":
            spans = editor.link_spans()
            line, a, b = spans[k % len(spans)]
            mid = position(editor.lines, line, (a + b) // 2, encoding)
            want = lsp.Range(start=position(editor.lines, line, a, encoding),
                             end=position(editor.lines, line, b, encoding))
            args = (note_uri, mid, want)
        else:
            args = (note_uri, lsp.Position(line=0, character=3), None)
        task = hover(kind, *args)
        pending.add(task)
        task.add_done_callback(pending.discard)
        result.hovers += 1

    total = round(RATE * seconds)
    cpu0 = cpu_seconds(pid)
    t0 = time.monotonic()
    result.rss_mb.append((0.0, rss_mb(pid)))
    k = 0
    sent_at: list[float] = []
    for i in range(total):
        due = t0 + i / RATE
        now = time.monotonic()
        if due > now:
            await asyncio.sleep(due - now)
        else:
            await asyncio.sleep(0)  # behind: send at once, but let the client read its inbox
        now = time.monotonic()
        result.max_lag_ms = max(result.max_lag_ms, (now - due) * 1000)
        e, rng = editor.next_edit(plant=(i == total - 1))  # the last change plants a finding
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=note_uri, version=i + 2),
            content_changes=[lsp.TextDocumentContentChangePartial(range=rng, text=e.text)]))
        sent_at.append(now - t0)
        # Hovers and memory samples go by the changes sent, not the clock: the same number on
        # a busy machine as on a quiet one (the clock only paces the sending).
        if i % HOVER_EVERY == 0:
            send_hover(k)
            k += 1
        if i and i % RATE == 0:
            result.rss_mb.append((i / RATE, rss_mb(pid)))
    last_sent = time.monotonic()
    result.rss_mb.append((total / RATE, rss_mb(pid)))
    result.duration_s = last_sent - t0
    result.changes = total
    result.toggles = editor.toggles
    result.changes_per_s = [sum(1 for t in sent_at if s <= t < s + 1) for s in range(int(result.duration_s) + 1)]
    result.server_cpu_s = cpu_seconds(pid) - cpu0

    # What the engine finds in the final text (in a thread: the client keeps reading meanwhile).
    expected = await asyncio.to_thread(expected_diagnostics, root, NOTE, editor.text, encoding)
    # Every hover sent is answered (each has its own timeout).
    if pending:
        await asyncio.wait(set(pending))
    # One more, answered after every change was handled: the server's text is the client's.
    await hover("route", index_uri, lsp.Position(line=route_line, character=4), len(editor.text.encode("utf-8")))
    result.final_codes = [row[0] for row in expected.get(note_uri, [])]
    mine = lambda: published_rows(client.diagnostics.get(note_uri, []))  # noqa: E731
    try:
        await _wait(lambda: mine() == expected.get(note_uri, []), settle_timeout, "the final diagnostics")
        # No stale analysis: the note's publications came in version order, and the last one
        # was made from the final text (a late analysis of an older text would break the order).
        # (Before the scan lands the opened note's early findings carry no version.)
        versions = [v for u, v in log.versions if u == note_uri]
        while versions and versions[0] is None:
            versions.pop(0)
        final_version = total + 1
        if not versions or None in versions or versions != sorted(versions):
            result.mismatch = f"the note's publications are not in version order: {versions}"
        elif versions[-1] != final_version:
            result.mismatch = f"the last publication is of version {versions[-1]}, the final text is {final_version}"
        note_arrivals = [t for t, u in log.arrivals if u == note_uri and t >= t0]
        result.note_publishes = len(note_arrivals)
        result.settle_ms = (note_arrivals[-1] - last_sent) * 1000
        every = set(expected) | {u for u in client.diagnostics if u.startswith(uri(root) + "/")}
        got = {u: published_rows(client.diagnostics.get(u, [])) for u in every}
        want = {u: expected.get(u, []) for u in every}
        result.diagnostics_match = got == want and not result.mismatch
        if got != want:
            result.mismatch = f"published {got}\nexpected {want}"
    except AssertionError:
        result.mismatch = f"the note's diagnostics never settled: published {mine()}\nexpected {expected.get(note_uri)}"
    result.rss_after_mb = rss_mb(pid)
    return result


def memory_verdict(samples: list[tuple[float, float]]) -> tuple[bool, str]:
    """Whether the server's RSS stayed flat during the flood: (ok, why not).

    `samples` are (seconds into the flood, MB), one a second and one at its end. The first
    second is warm-up (caches, the allocator's arenas and the parse of the note grow to their
    working size), so the baseline is the sample after it.

    - Growth over 30 MB fails: a leak of every text version (20 KB+ a change, 4 MB+ a second)
      gets there in a few seconds; fragmentation noise is a few MB.
    - Growth in every second, each faster than 0.1 MB/s, fails (given 3 seconds or more): a
      leak of even 0.5 KB a change does that, while a healthy heap is flat between the odd
      step up (an arena, a page of a dict that grew) — measured flat to 0.1 MB over 20 s.
    """
    after = [(t, mb) for t, mb in samples if t >= 0.9]
    if len(after) < 2:
        return True, ""
    growth = after[-1][1] - after[0][1]
    if growth >= 30:
        return False, f"RSS grew {growth:.1f} MB after the first second: {samples}"
    rates = [(b - a) / (tb - ta) for (ta, a), (tb, b) in zip(after, after[1:], strict=False) if tb - ta >= 0.5]
    if len(rates) >= 3 and min(rates) > 0.1:
        return False, (f"RSS grew in every second of the flood, by {min(rates):.2f}-{max(rates):.2f} MB/s "
                       f"({growth:.1f} MB in all): {samples}")
    return True, ""


async def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


# -- the test ----------------------------------------------------------------------------------

@pytest.fixture
def root(tmp_path: Path) -> Path:
    return flood_root(tmp_path / "memory")


def test_the_note_is_realistic() -> None:
    text = flood_note()
    assert 19_000 <= len(text.encode("utf-8")) <= 21_000
    editor = Editor(text, SEED)
    for _ in range(2000):
        editor.next_edit()
    assert editor.toggles > 20 and len(editor.link_spans()) == len(Editor(text, SEED).link_spans()) + editor.dangling


async def test_didchange_flood_with_hovers(client: LanguageClient, root: Path):
    init = await start(client, root)
    encoding = init.capabilities.position_encoding or "utf-16"
    r = await run_flood(client, root, encoding)
    s = r.summary()
    print(f"\nflood: {s}")

    assert r.changes == round(RATE * FLOOD_SECONDS)
    # Every hover answered, and right: sent in step with the changes, each one sees the text
    # as the client had it (a route's card counts the note's bytes; a link's range moves with it).
    # How fast they are answered is `make bench`'s (benchmarks/flood_bench.py), not a test's.
    assert r.hovers == r.changes // HOVER_EVERY
    assert r.hover_failures == []

    # The final diagnostics are those of the final text, for the note and every other file.
    assert r.diagnostics_match, r.mismatch
    assert r.final_codes  # the last change planted a finding: not a trivially empty comparison

    # Memory stays flat (see `memory_verdict` for what a leak looks like and what noise does).
    flat, why = memory_verdict(r.rss_mb)
    assert flat, why
