"""Writes an agent makes (docs/design.md §6.1): `save` and `route` plans, and the preview token
that binds a write to exactly what the user saw."""

from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_helpers import TODAY
from pmem_lsp.engine.lifecycle.execute import Tokened, execute
from pmem_lsp.engine.lifecycle.operations import context
from pmem_lsp.engine.lifecycle.preview import (
    Request,
    StalePreview,
    changes,
    preview,
    proposed_findings,
)
from pmem_lsp.engine.lifecycle.safety import Refusal
from pmem_lsp.engine.settings import resolve_settings
from roots import active_file, make_root

NOTE = ("# Kiln firing log\n\n## Summary\n\n- Bisque firings run to cone 04.\n- Glaze firings run to cone 6.\n"
        "- The kiln sits in the garage.\n\n## Details\nTimes and temperatures.\n")
FAKE_KEY = "AKIA" + "J7QX2M4RZ8KD5N3V"  # the shape of an AWS access key id


def digest(root: Path) -> dict[str, str]:
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        out[rel] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def test_saving_a_new_file_previews_it_and_its_route_and_applies_exactly_that(tmp_path):
    root = make_root(tmp_path, {})
    before = digest(root)
    request = Request("save", "projects/kiln.md", content=NOTE)
    shown = preview(context(root, TODAY), request)
    assert digest(root) == before, "a preview writes nothing"
    assert "projects/kiln.md" in shown.plan.preview and "Bisque firings" in shown.plan.preview
    route = shown.plan.facts["route"]
    assert route == "- [Kiln firing log](projects/kiln.md) — Bisque firings run to cone 04."
    assert [c["kind"] for c in changes(shown.plan)] == ["create", "update"]

    plan, done = execute(root, Tokened(request, shown.token), today=TODAY)
    assert (root / "projects/kiln.md").read_text(encoding="utf-8") == NOTE
    assert route in (root / "_index.md").read_text(encoding="utf-8").splitlines()
    assert done == ["created projects/kiln.md", "updated _index.md"]
    # The token is spent: the same preview cannot be applied twice.
    with pytest.raises(StalePreview):
        execute(root, Tokened(request, shown.token), today=TODAY)


def test_a_new_folder_is_made_and_a_core_file_is_saved_without_a_route(tmp_path):
    root = make_root(tmp_path, {})
    shown = preview(context(root, TODAY), Request("save", "clients/acme/brief.md", content=NOTE))
    assert [c["kind"] for c in changes(shown.plan)] == ["create-folder", "create", "update"]
    execute(root, Tokened(shown.request, shown.token), today=TODAY)
    assert (root / "clients/acme/brief.md").read_text(encoding="utf-8") == NOTE

    index = (root / "_index.md").read_text(encoding="utf-8")
    core = "# Profile\n\n## Identity\n- Name: Test Person\n- Based in Malmö now.\n"
    shown = preview(context(root, TODAY), Request("save", "_core/profile.md", content=core))
    assert "never routed" in shown.plan.preview
    execute(root, Tokened(shown.request, shown.token), today=TODAY)
    assert (root / "_core/profile.md").read_text(encoding="utf-8") == core
    assert (root / "_index.md").read_text(encoding="utf-8") == index


def test_rewriting_an_unrouted_file_without_a_route_names_no_option(tmp_path):
    # An undo or a restore is a save with `route=False` and no `--no-route` of the user's: its
    # preview must not say that option was given, only that the index stays as it is.
    root = make_root(tmp_path)
    (root / "notes/unrouted-log.md").write_text(active_file("Log"), encoding="utf-8")  # no route for it
    shown = preview(context(root, TODAY), Request("save", "notes/unrouted-log.md", content=active_file("Log", body="x\n"),
                                                   route=False))
    assert "_index.md: unchanged" in shown.plan.preview and "--no-route" not in shown.plan.preview
    new = preview(context(root, TODAY), Request("save", "notes/new.md", content=active_file("New"), route=False))
    assert "no route (--no-route)" in new.plan.preview


def test_saving_an_existing_file_shows_a_diff_and_keeps_its_route(tmp_path):
    root = make_root(tmp_path, {"projects/alpha.md": active_file("Alpha")})
    new = active_file("Alpha", body="## Context\nThe work moved to Malmö.\n")
    shown = preview(context(root, TODAY), Request("save", "projects/alpha.md", content=new))
    assert "-Some details that live below the summary." in shown.plan.preview
    assert "+The work moved to Malmö." in shown.plan.preview
    assert "routed already" in shown.plan.preview
    assert [c["path"] for c in changes(shown.plan)] == ["projects/alpha.md"]
    execute(root, Tokened(shown.request, shown.token), today=TODAY)
    assert (root / "projects/alpha.md").read_text(encoding="utf-8") == new


def test_no_route_leaves_the_index_alone(tmp_path):
    root = make_root(tmp_path, {})
    index = (root / "_index.md").read_bytes()
    shown = preview(context(root, TODAY), Request("save", "notes/loose.md", content=NOTE, route=False))
    assert "no route" in shown.plan.preview
    execute(root, Tokened(shown.request, shown.token), today=TODAY)
    assert (root / "_index.md").read_bytes() == index and (root / "notes/loose.md").is_file()


@pytest.mark.parametrize("path, content, rule", [
    ("notes/keys.md", f"# Keys\n\naws_access_key_id = {FAKE_KEY}\n", "no-secrets"),
    ("_archive/projects/old.md", NOTE, "protected-path"),
    ("_archive/_index.md", "# Archive index\n", "protected-path"),
    ("_index.md", "# Memory index\n", "protected-path"),
    (".obsidian/notes.md", NOTE, "protected-path"),
    ("notes/todo.txt", NOTE, "wrong-zone"),
    ("../outside.md", NOTE, "relative-path"),
    ("/etc/passwd.md", NOTE, "relative-path"),
    ("notes/empty.md", "  \n", "content"),
    ("notes/nul.md", "# A\n\x00\n", "content"),
])
def test_save_refuses_and_writes_nothing(tmp_path, path, content, rule):
    root = make_root(tmp_path, {})
    before = digest(root)
    with pytest.raises(Refusal) as refused:
        preview(context(root, TODAY), Request("save", path, content=content))
    assert refused.value.rule == rule
    assert FAKE_KEY not in refused.value.message and FAKE_KEY[4:] not in refused.value.message
    assert digest(root) == before


def test_a_secret_shape_the_person_allowed_can_be_saved_again_but_not_newly_allowed(tmp_path):
    text = f"# Docs\n\nThe example key in the AWS docs: `{FAKE_KEY}` <!-- pmem: allow-secret -->\n"
    root = make_root(tmp_path, {"notes/aws-docs.md": text})
    shown = preview(context(root, TODAY), Request("save", "notes/aws-docs.md", content=text + "More.\n"))
    assert shown.token is not None
    execute(root, Tokened(shown.request, shown.token), today=TODAY)
    assert (root / "notes/aws-docs.md").read_text(encoding="utf-8") == text + "More.\n"
    assert "notes/aws-docs.md" in (root / "_index.md").read_text(encoding="utf-8")
    # A saved text cannot mark a value as not secret: that is the person's, in their editor.
    with pytest.raises(Refusal) as refused:
        preview(context(root, TODAY), Request("save", "notes/new-docs.md", content=text))
    assert refused.value.rule == "no-secrets" and FAKE_KEY not in refused.value.message
    with pytest.raises(Refusal) as named:
        preview(context(root, TODAY), Request("save", f"notes/{FAKE_KEY}.md", content="# Keys\n\nNone.\n"))
    assert named.value.rule == "no-secrets" and FAKE_KEY not in named.value.message


def test_a_change_between_preview_and_apply_makes_the_token_stale(tmp_path):
    root = make_root(tmp_path, {"projects/alpha.md": active_file("Alpha")})
    new = active_file("Alpha", body="## Context\nRewritten.\n")
    request = Request("save", "projects/alpha.md", content=new)
    shown = preview(context(root, TODAY), request)
    # Someone else (the person, another agent) edits the file meanwhile.
    (root / "projects/alpha.md").write_text(active_file("Alpha", body="## Context\nTheir edit.\n"), encoding="utf-8")
    edited = digest(root)
    with pytest.raises(StalePreview) as stale:
        execute(root, Tokened(request, shown.token), today=TODAY)
    assert stale.value.rule == "stale-preview"
    assert digest(root) == edited, "nothing written"


def test_the_token_binds_the_arguments(tmp_path):
    root = make_root(tmp_path, {})
    shown = preview(context(root, TODAY), Request("save", "notes/a.md", content=NOTE))
    before = digest(root)
    for other in (Request("save", "notes/a.md", content=NOTE + "More.\n"),
                  Request("save", "notes/b.md", content=NOTE),
                  Request("save", "notes/a.md", content=NOTE, description="another description"),
                  Request("save", "notes/a.md", content=NOTE, route=False)):
        with pytest.raises(StalePreview):
            execute(root, Tokened(other, shown.token), today=TODAY)
    assert digest(root) == before


def test_lifecycle_operations_take_tokens_too(tmp_path):
    root = make_root(tmp_path, {"projects/alpha.md": active_file("Alpha")})
    request = Request("archive", "projects/alpha.md", reason="shipped")
    shown = preview(context(root, TODAY), request)
    execute(root, Tokened(request, shown.token), today=TODAY)
    assert (root / "_archive/projects/alpha.md").is_file() and not (root / "projects/alpha.md").exists()


def test_route_add_routes_an_unrouted_file_once(tmp_path):
    root = make_root(tmp_path, {"_index.md": "# Memory index\n\n## Projects\n",
                                "projects/alpha.md": active_file("Alpha")})
    shown = preview(context(root, TODAY), Request("route", "projects/alpha.md", description="the alpha work"))
    # An index with no route yet and no archive record shows no dialect: the v0.10 line, which
    # the format's reference CLI reads (docs/decisions.md, "Dialects").
    assert shown.plan.facts["route"] == "- projects/alpha.md — the alpha work"
    execute(root, Tokened(shown.request, shown.token), today=TODAY)
    assert (root / "_index.md").read_text(encoding="utf-8") == (
        "# Memory index\n\n## Projects\n- projects/alpha.md — the alpha work\n")
    again = preview(context(root, TODAY), Request("route", "projects/alpha.md"))
    assert again.empty and again.token is None and "routes it already" in again.plan.preview
    with pytest.raises(Refusal):
        preview(context(root, TODAY), Request("route", "_core/profile.md"))
    with pytest.raises(Refusal):
        preview(context(root, TODAY), Request("route", "projects/missing.md"))


def test_proposed_findings_are_those_of_the_text_as_it_would_be(tmp_path):
    root = make_root(tmp_path, {})
    two = "# Short\n\n## Summary\n\n- One fact.\n- Two facts.\n"
    shown = preview(context(root, TODAY), Request("save", "notes/short.md", content=two))
    found = proposed_findings(root, shown.plan, resolve_settings(root))
    assert [(f.path, f.code) for f in found] == [("notes/short.md", "PM102")]
    assert not (root / "notes/short.md").exists()


# -- the token against any change (property) ---------------------------------------------
WHERE = st.sampled_from(["_index.md", "projects/alpha.md", "notes/unrelated.md", "_archive/_index.md", None])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=WHERE, op=st.sampled_from(["save", "archive", "route"]), same_size=st.booleans())
def test_any_change_to_a_file_the_write_reads_or_touches_makes_it_stale(tmp_path_factory, where, op, same_size):
    """Edit one file between preview and apply (or none): the apply goes through exactly when
    the edited file is one the write neither read nor touched — a same-size edit with the
    modification time put back included."""
    root = make_root(tmp_path_factory.mktemp("root"), {
        "_index.md": "# Memory index\n\n## Projects\n",
        "projects/alpha.md": active_file("Alpha"),
        "notes/unrelated.md": active_file("Unrelated"),
    })
    request = {"save": Request("save", "projects/alpha.md", content=active_file("Alpha", body="New.\n")),
               "archive": Request("archive", "projects/alpha.md"),
               "route": Request("route", "projects/alpha.md")}[op]
    shown = preview(context(root, TODAY), request)
    involved = set(shown.read) | set(shown.plan.touched())
    if where is not None:
        path = root / where
        old = path.read_bytes()
        st_ = os.stat(path)
        new = old.replace(b"#", b"=", 1) if same_size else old + b"\nAn agent's line.\n"
        path.write_bytes(new)
        os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns))
    if where is not None and where in involved:
        with pytest.raises(StalePreview):
            execute(root, Tokened(request, shown.token), today=TODAY)
    else:
        execute(root, Tokened(request, shown.token), today=TODAY)


@pytest.mark.parametrize("request_", [
    Request("save", "notes/kiln.md", content=NOTE, description=f"key {FAKE_KEY}"),
    Request("route", "projects/alpha.md", description=f"key {FAKE_KEY}"),
    Request("archive", "projects/alpha.md", reason=f"rotated {FAKE_KEY}"),
])
def test_a_description_or_reason_that_would_be_written_into_an_index_may_not_hold_a_secret(tmp_path, request_):
    root = make_root(tmp_path, {"_index.md": "# Memory index\n\n## Projects\n", "projects/alpha.md": active_file("Alpha")})
    before = digest(root)
    with pytest.raises(Refusal) as refused:
        preview(context(root, TODAY), request_)
    assert refused.value.rule == "no-secrets" and FAKE_KEY not in refused.value.message
    assert digest(root) == before


def test_a_save_with_unusable_settings_is_refused_with_the_reason_and_writes_nothing(tmp_path: Path):
    """A broken `.pmem.toml` decides nothing by default (a review: the defaults chose the
    dialect and the checks without anyone knowing): the save is refused, saying why, never a
    traceback, and the content (here holding a secret) is not echoed."""
    from pmem_lsp.engine.lifecycle.safety import SETTINGS

    root = make_root(tmp_path, {".pmem.toml": "bogus = [\n"})
    for content in (NOTE, NOTE + "token = ghp_R7x2Kq9LmZ4vB8nW1cYt5pJ3sD6fH0gE2aUk\n"):
        with pytest.raises(Refusal) as refused:
            preview(context(root, TODAY), Request("save", "projects/kiln.md", content=content))
        assert refused.value.rule == SETTINGS and "not valid TOML" in refused.value.message
        assert "ghp_R7x2" not in refused.value.message
    assert not (root / "projects/kiln.md").exists()


# -- a writer landing while the preview is made -------------------------------------------
def test_a_file_rewritten_while_the_preview_plans_gives_a_preview_of_the_new_bytes(tmp_path):
    """Another agent truncates and rewrites the file right after the plan read it: the token
    must not bind the new bytes beside a diff made from the old ones (applying it would write
    over the other agent's text with what the user never saw)."""
    root = make_root(tmp_path, {"projects/alpha.md": active_file("Alpha")})
    theirs = active_file("Alpha", body="## Context\nThe other agent's paragraph.\n")
    base = context(root, TODAY)
    rewritten = []

    def racing(rel: str) -> str | None:
        text = base.read_text(rel)
        if rel == "projects/alpha.md" and not rewritten:
            (root / rel).write_text(theirs, encoding="utf-8")
            rewritten.append(rel)
        return text

    mine = active_file("Alpha", body="## Context\nMy paragraph.\n")
    request = Request("save", "projects/alpha.md", content=mine)
    shown = preview(replace(base, read_text=racing), request)
    fresh = preview(context(root, TODAY), request)
    assert rewritten, "the racing write happened"
    assert shown.token == fresh.token
    assert shown.plan.preview == fresh.plan.preview
    assert "other agent's paragraph" in shown.plan.preview, "the diff is against what the disk holds"


def test_a_root_that_never_stops_changing_is_refused_not_previewed(tmp_path):
    root = make_root(tmp_path, {"projects/alpha.md": active_file("Alpha")})
    base = context(root, TODAY)
    count = []

    def always(rel: str) -> str | None:
        text = base.read_text(rel)
        if rel == "projects/alpha.md":
            count.append(rel)
            (root / rel).write_text(active_file("Alpha", body=f"## Context\nVersion {len(count)}.\n"),
                                    encoding="utf-8")
        return text

    with pytest.raises(Refusal) as refused:
        preview(replace(base, read_text=always), Request("save", "projects/alpha.md", content=NOTE))
    assert refused.value.rule == "stale-preview" and "kept changing" in refused.value.message
    assert len(count) >= 2, "it planned again before giving up"
