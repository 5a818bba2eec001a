"""Concurrent edits of the indexes during a lifecycle operation (issue 9; docs/design.md §3 "again at
the moment of execution"; docs/decisions.md "Lifecycle").

An agent rewrites `_index.md` while the user reads the preview, or while the editor moves the
file. The rule, in one place (`engine/lifecycle/changes.py`, through `WriteText.rebase`): every
index change is made on the text the index holds at that moment, so

- lines an agent added, reordered or changed elsewhere all survive, and the operation completes;
- when the route line the user confirmed (or the record) was changed or removed, the operation
  is refused, says that the index changed, and nothing moves.

Checked through the engine (plan, edit, replan/apply; and edits between the steps), the CLI's
interactive prompt, and the server (tests/server/test_server_concurrent_index.py, which shares
this module's root and edits): `_index.md` closed (the disk) and open in the editor (the
buffer, whose version the index edits carry).
"""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import pytest

from engine_helpers import findings
from pmem_lsp.cli.writes import run_write
from pmem_lsp.engine.lifecycle.fs_applier import ApplyError, apply_step, run_steps
from pmem_lsp.engine.lifecycle.operations import context, make_plan, replan
from pmem_lsp.engine.lifecycle.plan import Move, WriteText
from pmem_lsp.engine.lifecycle.preview import Request
from pmem_lsp.engine.lifecycle.safety import CHANGED, Refusal
from roots import base_files, summary_file, write_root

AI = "_archive/_index.md"
TODAY = dt.date.today()
ROUTE = "- [Old project](projects/old.md) — shipped in March"
INDEX = (
    "# Memory index\n"
    "\n"
    "## Projects\n"
    "- [Alpha](projects/alpha.md) — the alpha project\n"
    f"{ROUTE}\n"
    "- [Gamma](projects/gamma.md) — gamma things\n"
    "\n"
    "## Notes\n"
    "- [Keep](notes/keep.md) — stays\n"
    "- [Other](notes/other.md) — another note\n"
)
AGENT = "- [Old project notes](notes/agent.md) — written by an agent meanwhile"  # shares a prefix with ROUTE
UNROUTED = ("notes/agent.md", "PM202")  # until the agent routes it


def files() -> dict[str, str]:
    out = base_files()
    out.update({"_index.md": INDEX, "projects/old.md": summary_file("Old project"),
                "projects/gamma.md": summary_file("Gamma"), "notes/keep.md": summary_file("Keep"),
                "notes/other.md": summary_file("Other"), "notes/agent.md": summary_file("Agent")})
    return out


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_root(tmp_path / "memory", files())


# What an agent does to `_index.md` meanwhile: (name, edit, the route line survives as confirmed).
def insert_after_route(text: str) -> str:
    return text.replace(ROUTE + "\n", ROUTE + "\n" + AGENT + "\n")


def append(text: str) -> str:
    return text + AGENT + "\n"


def reorder(text: str) -> str:
    text = text.replace("- [Keep](notes/keep.md) — stays\n- [Other](notes/other.md) — another note\n",
                        "- [Other](notes/other.md) — another note\n- [Keep](notes/keep.md) — stays\n")
    text = text.replace("- [Alpha](projects/alpha.md) — the alpha project\n" + ROUTE + "\n",
                        ROUTE + "\n- [Alpha](projects/alpha.md) — the alpha project\n")
    return text.replace("# Memory index\n", "# Memory index\n\nKept short by the agent.\n") + AGENT + "\n"


def edit_elsewhere(text: str) -> str:
    return text.replace("gamma things", "gamma things, updated by the agent").replace("## Notes", "## Notes\n\n" + AGENT)


def everywhere(text: str) -> str:
    """Lines added before the route (every line after it shifts), right after it, reordered and
    appended: an edit computed on the text of the preview would hit the wrong lines."""
    text = text.replace("# Memory index\n", "# Memory index\n\nKept short by the agent.\n")
    text = text.replace("- [Keep](notes/keep.md) — stays\n- [Other](notes/other.md) — another note\n",
                        "- [Other](notes/other.md) — another note\n- [Keep](notes/keep.md) — stays\n")
    return insert_after_route(text) + "<!-- appended by the agent -->\n"


UNRELATED = {"insert-after-route": insert_after_route, "append": append, "reorder": reorder,
             "edit-elsewhere": edit_elsewhere, "everywhere": everywhere}


def change_route(text: str) -> str:
    return text.replace(ROUTE, ROUTE + " (and April)")


def remove_route(text: str) -> str:
    return text.replace(ROUTE + "\n", "")


def repoint_route(text: str) -> str:
    return text.replace("(projects/old.md)", "(projects/gamma.md)")


ROUTE_CHANGES = {"changed": change_route, "removed": remove_route, "repointed": repoint_route}


def without_route(text: str) -> str:
    assert text.count(ROUTE + "\n") == 1
    return text.replace(ROUTE + "\n", "")


def agent_edits(path: Path, edit) -> str:
    text = edit(path.read_text(encoding="utf-8"))
    path.write_text(text, encoding="utf-8")
    return text


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def assert_archived(root: Path, agent_text: str) -> None:
    assert not (root / "projects/old.md").exists() and (root / "_archive/projects/old.md").is_file()
    assert (root / "_index.md").read_text(encoding="utf-8") == without_route(agent_text)
    assert f"- index-line: {ROUTE}\n" in (root / AI).read_text(encoding="utf-8")


# -- the engine: plan, the agent edits, then re-validate and apply ------------------------------------
@pytest.mark.parametrize("edit", UNRELATED.values(), ids=UNRELATED.keys())
def test_unrelated_lines_survive_between_preview_and_execution(root: Path, edit):
    plan = make_plan(context(root, TODAY), "archive", "projects/old.md", "done")
    text = agent_edits(root / "_index.md", edit)
    run_steps(root, replan(context(root, TODAY), plan, "projects/old.md", "done"))
    assert_archived(root, text)
    assert findings(root, today=TODAY) == []


@pytest.mark.parametrize("edit", UNRELATED.values(), ids=UNRELATED.keys())
def test_a_stale_plan_applied_directly_keeps_the_agents_lines_too(root: Path, edit):
    plan = make_plan(context(root, TODAY), "archive", "projects/old.md", "done")
    text = agent_edits(root / "_index.md", edit)
    run_steps(root, plan)  # no replan: the applier makes each write on the current text itself
    assert_archived(root, text)


@pytest.mark.parametrize("edit", ROUTE_CHANGES.values(), ids=ROUTE_CHANGES.keys())
def test_a_changed_route_line_refuses_and_nothing_moves(root: Path, edit):
    plan = make_plan(context(root, TODAY), "archive", "projects/old.md", "done")
    agent_edits(root / "_index.md", edit)
    before = tree(root)
    with pytest.raises(Refusal) as exc:
        replan(context(root, TODAY), plan, "projects/old.md", "done")
    assert exc.value.rule == CHANGED
    assert "`_index.md` changed since the preview" in exc.value.message
    assert "nothing was changed" in exc.value.message
    assert "the route line to `projects/old.md` was changed or removed" in exc.value.message
    assert ROUTE not in exc.value.message  # named, not quoted: a route line can hold a secret
    with pytest.raises(ApplyError) as applied:
        run_steps(root, plan)  # the stale plan itself stops before the first step
    assert applied.value.rule == CHANGED and applied.value.done == ()
    assert tree(root) == before


def test_a_second_route_added_meanwhile_refuses_the_confirmed_preview(root: Path):
    """The preview listed one route to remove; there are two now: not what was confirmed."""
    plan = make_plan(context(root, TODAY), "archive", "projects/old.md", "done")
    agent_edits(root / "_index.md", lambda t: t + "- [Old again](projects/old.md) — a second route\n")
    with pytest.raises(Refusal) as exc:
        replan(context(root, TODAY), plan, "projects/old.md", "done")
    assert exc.value.rule == CHANGED and "`_index.md` changed" in exc.value.message


@pytest.mark.parametrize("edit", UNRELATED.values(), ids=UNRELATED.keys())
def test_an_edit_between_the_move_and_the_index_write_is_kept(root: Path, edit):
    """The window the server has while the editor moves the file: each write is made on the
    text of that moment, not on the text of the preview."""
    plan = replan(context(root, TODAY), make_plan(context(root, TODAY), "archive", "projects/old.md", "done"),
                  "projects/old.md", "done")
    apply_step(root, plan.steps[0])
    text = agent_edits(root / "_index.md", edit)
    for step in plan.steps[1:]:
        apply_step(root, step)
    assert_archived(root, text)


def test_a_route_changed_between_the_move_and_the_index_write_stops_there_and_check_reports_it(root: Path):
    plan = make_plan(context(root, TODAY), "archive", "projects/old.md", "done")
    assert isinstance(plan.steps[0], Move) and [w.path for w in plan.writes()] == [AI, "_index.md"]
    apply_step(root, plan.steps[0])
    apply_step(root, plan.steps[1])
    text = agent_edits(root / "_index.md", change_route)
    with pytest.raises(Refusal) as exc:
        apply_step(root, plan.steps[2])
    assert exc.value.rule == CHANGED and "route line" in exc.value.message
    assert (root / "_index.md").read_text(encoding="utf-8") == text  # the agent's line, untouched
    assert {(f.path, f.code) for f in findings(root, today=TODAY)} == {("_index.md", "PM205"), UNROUTED}


def test_recover_puts_the_route_back_among_the_agents_lines(root: Path):
    run_steps(root, make_plan(context(root, TODAY), "archive", "projects/old.md", "done"))
    plan = make_plan(context(root, TODAY), "recover", "projects/old.md")
    text = agent_edits(root / "_index.md", lambda t: t.replace("gamma things\n", "gamma things\n" + AGENT + "\n"))
    run_steps(root, replan(context(root, TODAY), plan, "projects/old.md"))
    after = (root / "_index.md").read_text(encoding="utf-8")
    # Back where it was (after Alpha, its old neighbour above), the agent's line kept (issue 26).
    alpha = "- [Alpha](projects/alpha.md) — the alpha project\n"
    assert after == text.replace(alpha, alpha + ROUTE + "\n")
    assert (root / "projects/old.md").is_file()


def test_recover_adds_no_second_route_when_an_agent_added_one_during_the_move(root: Path):
    run_steps(root, make_plan(context(root, TODAY), "archive", "projects/old.md", "done"))
    plan = make_plan(context(root, TODAY), "recover", "projects/old.md")
    apply_step(root, plan.steps[0])
    text = agent_edits(root / "_index.md", lambda t: t + "- [Old](projects/old.md) — routed by the agent\n")
    for step in plan.steps[1:]:
        apply_step(root, step)
    assert (root / "_index.md").read_text(encoding="utf-8") == text
    assert "projects/old.md" not in (root / AI).read_text(encoding="utf-8")


def test_records_an_agent_adds_survive_and_an_edited_record_refuses(root: Path):
    run_steps(root, make_plan(context(root, TODAY), "archive", "projects/old.md", "done"))
    ai = root / AI
    plan = make_plan(context(root, TODAY), "delete", "projects/old.md")
    other = "\n## notes/gone.md\n- status: archived\n- original: notes/gone.md\n- location: _archive/notes/gone.md\n"
    agent_edits(ai, lambda t: t + other)
    run_steps(root, replan(context(root, TODAY), plan, "projects/old.md"))
    assert other in ai.read_text(encoding="utf-8") and "- status: trashed" in ai.read_text(encoding="utf-8")

    plan = make_plan(context(root, TODAY), "recover", "projects/old.md")
    agent_edits(ai, lambda t: t.replace("- reason: done", "- reason: done, and more"))
    before = tree(root)
    with pytest.raises(Refusal) as exc:
        replan(context(root, TODAY), plan, "projects/old.md")
    assert exc.value.rule == CHANGED and "`_archive/_index.md` changed" in exc.value.message
    with pytest.raises(ApplyError):
        run_steps(root, plan)
    assert tree(root) == before


def test_plans_carry_their_changes_as_data(root: Path):
    plan = make_plan(context(root, TODAY), "archive", "projects/old.md", "done")
    writes = plan.writes()
    assert all(isinstance(w, WriteText) and w.change is not None for w in writes)
    index = next(w for w in writes if w.path == "_index.md")
    assert index.change.lines == (ROUTE,)
    rebased = index.rebase(append(INDEX))
    assert rebased.before == append(INDEX) and rebased.after == without_route(append(INDEX))
    assert index.rebase(INDEX) is index


# -- the CLI: the agent edits while the prompt waits -----------------------------------------------------
class AgentAtThePrompt(io.StringIO):
    """A terminal whose user answers "y" after an agent rewrote `_index.md`."""

    def __init__(self, root: Path, edit) -> None:
        super().__init__()
        self.root, self.edit = root, edit
        self.text: str | None = None
        self.tree: dict[str, bytes] = {}

    def isatty(self) -> bool:
        return True

    def readline(self, *args) -> str:
        self.text = agent_edits(self.root / "_index.md", self.edit)
        self.tree = tree(self.root)
        return "y\n"


@pytest.mark.parametrize("edit", UNRELATED.values(), ids=UNRELATED.keys())
def test_cli_prompt_keeps_the_agents_lines(root: Path, edit):
    tty = AgentAtThePrompt(root, edit)
    out, err = io.StringIO(), io.StringIO()
    assert run_write(root, Request("archive", "projects/old.md", "done"), stdin=tty, out=out, err=err) == 0, \
        err.getvalue()
    assert_archived(root, tty.text)


@pytest.mark.parametrize("edit", ROUTE_CHANGES.values(), ids=ROUTE_CHANGES.keys())
def test_cli_prompt_refuses_a_changed_route_line(root: Path, edit):
    tty = AgentAtThePrompt(root, edit)
    out, err = io.StringIO(), io.StringIO()
    assert run_write(root, Request("archive", "projects/old.md", "done"), stdin=tty, out=out, err=err) == 2
    assert "changed-since-preview" in err.getvalue() and "`_index.md` changed" in err.getvalue()
    assert tree(root) == tty.tree  # nothing moved, nothing rewritten after the agent's edit
