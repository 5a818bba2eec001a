"""Navigation in the engine (docs/design.md §5): hover, links and definition, references, completion,
symbols, rename edits and code lenses — on a copy of the demo memory with a few additions."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from engine_helpers import TODAY, scan
from pmem_lsp.engine.analysis import Analysis
from pmem_lsp.engine.navigation import (
    complete,
    definition,
    document_links,
    document_symbols,
    hover,
    lens_kinds,
    lens_title,
    ref_graph,
    references,
    rename_edits,
    workspace_symbols,
)
from pmem_lsp.engine.root_state import RootState
from pmem_lsp.engine.settings import resolve_settings
from roots import TOKEN, make_root, navigation_demo


class Demo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.state = RootState.scan(root, resolve_settings(root))
        self.findings = Analysis(self.state, TODAY).by_path()

    def line_of(self, rel: str, needle: str) -> int:
        lines = self.state.doc(rel).lines
        return next(i for i, line in enumerate(lines) if needle in line)

    def hover(self, rel: str, needle: str, column: int = 5):
        return hover(self.state, rel, self.line_of(rel, needle), column, self.findings, TODAY)

    def stat_line(self, rel: str) -> str:
        st = os.stat(self.root / rel)
        day = dt.date.fromtimestamp(st.st_mtime).isoformat()
        return f"{st.st_size:,} bytes · ~{round(st.st_size / 4):,} tokens · changed {day}"


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Demo:
    return Demo(navigation_demo(tmp_path_factory.mktemp("nav")))


@pytest.fixture
def fresh(tmp_path) -> Demo:
    """A demo of its own, for tests that change buffers."""
    return Demo(navigation_demo(tmp_path))


# -- hover --------------------------------------------------------------------------
def test_hover_on_a_route_shows_the_targets_summary(demo: Demo):
    h = demo.hover("_index.md", "(projects/retail-pipeline.md)")
    assert h.markdown == (
        "**Retail data pipeline — Fjällgården** · `projects/retail-pipeline.md`\n"
        "\n"
        "- Client: Fjällgården AB, an outdoor retailer with 41 stores; contract runs to 2027-03-31.\n"
        "- Building a nightly ELT pipeline from the POS, webshop and ERP into BigQuery with dbt.\n"
        "- Decision (2026-10-07): Airflow on Cloud Composer 2, not self-hosted, to reduce on-call load.\n"
        "- Nightly load must land before 06:00 so the store managers' dashboard is fresh at opening.\n"
        "- Current phase: webshop source in production; ERP source in testing.\n"
        "\n"
        f"{demo.stat_line('projects/retail-pipeline.md')}\n")
    line = demo.state.doc("_index.md").lines[h.line]
    assert line[h.start:h.end] == "projects/retail-pipeline.md"


def test_hover_without_summary_shows_first_lines_and_open_problems(demo: Demo):
    h = demo.hover("_index.md", "(notes/meal-planning.md)")
    text = h.markdown
    assert text.startswith("**Meal planning** · `notes/meal-planning.md`\n\n*No summary; the first lines:*\n\n"
                           "```markdown\nUpdated: 2026-11-16\n## TL;DR\n- Weekly plan made on Sunday;")
    assert f"\n{demo.stat_line('notes/meal-planning.md')}\n\nOpen problems:\n- `PM106` summary-heading-variant" in text


def test_hover_on_a_title_without_a_route(demo: Demo):
    h = demo.hover("notes/reading-list.md", "# Reading list")
    assert h.markdown == "**No route** in `_index.md`: agents will not load `notes/reading-list.md` on demand.\n"
    assert (h.line, h.start, h.end) == (0, 0, len("# Reading list"))


def test_hover_on_a_routed_title_shows_its_route_line(demo: Demo):
    h = demo.hover("projects/invoice-automation.md", "# Invoice automation")
    assert h.markdown == (
        "**Routed** in `_index.md` (line 8):\n\n```markdown\n"
        "- [Invoice automation](projects/invoice-automation.md) — script that turns monthly time logs into "
        "Fortnox invoice drafts\n```\n")


def test_hover_on_a_trashed_record_counts_the_days_left(demo: Demo):
    h = demo.hover("_archive/_index.md", "- recover-by: 2026-12-20")
    assert h.markdown == (
        "**Archive record** `notes/old-recipes.md` — trashed\n"
        "\n"
        "- original: `notes/old-recipes.md`\n"
        "- location: `_archive/_trash/notes/old-recipes.md`\n"
        "- archived: 2026-10-01\n"
        "- deleted: 2026-11-20\n"
        "- recover-by: 2026-12-20 — 19 days left\n"
        "- reason: replaced by the recipe search\n"
        "\n---\n\n"
        "**Old recipes** · `_archive/_trash/notes/old-recipes.md`\n"
        "\n"
        "*No summary; the first lines:*\n"
        "\n```markdown\nPancakes and waffles.\n```\n"
        "\n"
        f"{demo.stat_line('_archive/_trash/notes/old-recipes.md')}\n")
    assert demo.state.doc("_archive/_index.md").lines[h.line] == "## notes/old-recipes.md"


@pytest.mark.parametrize("today, expected", [
    (dt.date(2026, 12, 19), "1 day left"), (dt.date(2026, 12, 20), "last day to recover"),
    (dt.date(2026, 12, 23), "expired 3 days ago; it can be purged"),
])
def test_days_left_near_the_deadline(demo: Demo, today, expected):
    line = demo.line_of("_archive/_index.md", "- recover-by: 2026-12-20")
    h = hover(demo.state, "_archive/_index.md", line, 0, demo.findings, today)
    assert f"- recover-by: 2026-12-20 — {expected}\n" in h.markdown


def test_hover_on_a_relative_link_is_the_same_card_as_its_route(demo: Demo):
    line = demo.line_of("projects/conference-talk.md", "[Fjällgården notes]")
    text = demo.state.doc("projects/conference-talk.md").lines[line]
    for column in (text.index("[Fjäll"), text.index("retail-pipeline.md") + 3, text.index(")).") + 1):
        h = hover(demo.state, "projects/conference-talk.md", line, column, demo.findings, TODAY)
        assert h.markdown == demo.hover("_index.md", "(projects/retail-pipeline.md)").markdown
    assert hover(demo.state, "projects/conference-talk.md", line, 2, demo.findings, TODAY) is None


def test_hover_never_shows_a_secret_but_shows_the_summary_around_it(demo: Demo):
    # The summary stays readable (issue 13): the secret's own text is replaced, by the
    # finding's range, and a note says that something was masked.
    h = demo.hover("_index.md", "(notes/keys.md)")
    assert TOKEN not in h.markdown and TOKEN[:8] not in h.markdown
    assert "- Deploy token: [secret]\n- Rotated every quarter.\n- Kept for the CI job.\n" in h.markdown
    assert "*Holds a likely secret (PM401): masked here.*" in h.markdown
    assert "- `PM401` secret (line 4): likely GitHub token" in h.markdown


def test_hover_masks_a_secret_that_the_analysis_does_not_report(tmp_path):
    """Hover masks twice: the PM401 findings' ranges, then any likely secret on the lines it
    shows. With PM401 ignored the analysis reports nothing, and the second step alone keeps
    the token out of the card (removing it makes this fail)."""
    text = f"# Keys\n\n## Summary\n- Deploy token: {TOKEN}\n- Rotated every quarter.\n- Kept for the CI job.\n"
    root = make_root(tmp_path, {"notes/keys.md": text})
    state = scan(root, {"ignore": ["PM401"]})
    found = Analysis(state, TODAY).by_path()
    assert not [f for fs in found.values() for f in fs if f.code == "PM401"]
    lines = state.doc("_index.md").lines
    line = next(i for i, x in enumerate(lines) if "notes/keys.md" in x)
    h = hover(state, "_index.md", line, lines[line].index("notes/keys.md"), found, TODAY)
    assert "- Rotated every quarter." in h.markdown  # the summary is shown
    assert TOKEN not in h.markdown and TOKEN[4:16] not in h.markdown


def test_hover_hides_every_line_of_a_multi_line_secret(tmp_path):
    import base64
    import random

    rng = random.Random(5)
    body = base64.b64encode(bytes(rng.randrange(256) for _ in range(288))).decode()
    rows = [body[i:i + 64] for i in range(0, len(body), 64)]
    pem = "-----BEGIN " + "OPENSSH PRIVATE KEY-----"
    text = ("# Keys\n\nNotes on the deploy key, kept here by mistake:\n" + pem + "\n" + "\n".join(rows)
            + "\n-----END " + "OPENSSH PRIVATE KEY-----\nMore text.\n")
    body = rows[0]
    root = make_root(tmp_path, {"notes/keys.md": text})
    state = scan(root)
    found = Analysis(state, TODAY).by_path()
    line = state.doc("_index.md").lines.index(next(x for x in state.doc("_index.md").lines if "notes/keys.md" in x))
    col = state.doc("_index.md").lines[line].index("notes/keys.md")
    h = hover(state, "_index.md", line, col, found, TODAY)
    assert body not in h.markdown and body[:12] not in h.markdown and body[::-1][:12] not in h.markdown
    assert "Notes on the deploy key, kept here by mistake:" in h.markdown
    assert "[a line of a secret, hidden]" in h.markdown


def test_hover_on_a_dangling_route_and_on_plain_text(demo: Demo):
    h = demo.hover("_index.md", "(projects/website-redesign.md)")
    assert h.markdown == "`projects/website-redesign.md`\n\n**Does not exist** in the memory root.\n"
    assert demo.hover("_index.md", "One-line routes") is None
    assert demo.hover("projects/retail-pipeline.md", "## Context") is None


# -- links and definition ------------------------------------------------------------
def test_document_links_of_the_index_name_existing_files(demo: Demo):
    targets = [d.target for d in document_links(demo.state, "_index.md")]
    assert targets[:2] == ["projects/retail-pipeline.md", "projects/harbour-analytics.md"]
    assert "projects/website-redesign.md" not in targets  # dangling: a diagnostic, not a link
    assert "notes/airflow-tips.md" in targets and "notes/sichuan-cooking.md" in targets  # wiki, code span
    assert len(targets) == 13


def test_document_links_of_a_note_and_of_the_archive_index(demo: Demo):
    links = document_links(demo.state, "notes/travel-2026.md")
    assert [d.target for d in links] == ["notes/sichuan-cooking.md"]  # packing-list.md is missing
    records = document_links(demo.state, "_archive/_index.md")
    assert [d.target for d in records] == ["_archive/projects/ferry-ticket-etl.md",
                                           "_archive/_trash/notes/old-recipes.md"]
    line = demo.state.doc("_archive/_index.md").lines[records[0].line]
    assert line[records[0].start:records[0].end] == "_archive/projects/ferry-ticket-etl.md"


@pytest.mark.parametrize("rel, needle, column, expected", [
    ("_index.md", "(projects/retail-pipeline.md)", 30, ("projects/retail-pipeline.md", 0)),
    ("_index.md", "[[notes/airflow-tips]]", 8, ("notes/airflow-tips.md", 0)),
    ("_index.md", "`notes/sichuan-cooking.md`", 8, ("notes/sichuan-cooking.md", 0)),
    ("projects/conference-talk.md", "[my Airflow notes]", 70, ("notes/airflow-tips.md", 0)),
    ("projects/recipe-search.md", "[a](a.md#summary)", 12, ("projects/a.md", 4)),
    ("_archive/_index.md", "- location: _archive/projects/ferry", 4,
     ("_archive/projects/ferry-ticket-etl.md", 0)),
    ("_index.md", "(projects/website-redesign.md)", 30, None),
    ("notes/travel-2026.md", "[packing list]", 60, None),
])
def test_definition(demo: Demo, rel, needle, column, expected):
    found = definition(demo.state, rel, demo.line_of(rel, needle), column)
    assert (found.path, found.line) == expected if expected else found is None


# -- references ------------------------------------------------------------------------
def test_references_find_the_route_and_the_links(demo: Demo):
    found = references(demo.state, "_index.md", demo.line_of("_index.md", "(projects/a.md)"), 10)
    assert [(r.path, r.line) for r in found] == [
        ("_index.md", demo.line_of("_index.md", "(projects/a.md)")),
        ("notes/airflow-tips.md", demo.line_of("notes/airflow-tips.md", "../projects/a.md")),
        ("projects/recipe-search.md", demo.line_of("projects/recipe-search.md", "(a.md#summary)")),
    ]
    text = demo.state.doc("notes/airflow-tips.md").lines[found[1].line]
    assert text[found[1].start:found[1].end] == "../projects/a.md"
    # On the file's own title: the same references, and the title itself as the declaration.
    on_title = references(demo.state, "projects/a.md", 0, 3, include_declaration=True)
    assert [(r.path, r.line) for r in on_title] == [("projects/a.md", 0)] + [(r.path, r.line) for r in found]


# -- completion ------------------------------------------------------------------------
def _index_cursor(demo: Demo, text: str) -> tuple[int, int]:
    """Put `text` on a new last line of the index buffer; the cursor at its end."""
    demo.state.set_buffer("_index.md", (demo.root / "_index.md").read_text(encoding="utf-8") + text)
    return len(demo.state.doc("_index.md").lines) - 1, len(text)


def test_completion_in_the_index_lists_unrouted_files_first(fresh: Demo):
    line, char = _index_cursor(fresh, "- [New](")
    result = complete(fresh.state, "_index.md", line, char, fresh.findings)
    labels = [c.label for c in sorted(result.items, key=lambda c: c.sort_text)]
    assert labels[0] == "notes/reading-list.md"  # the only active file without a route
    assert set(labels[1:]) >= {"projects/a.md", "projects/retail-pipeline.md", "notes/keys.md"}
    assert not any(label.startswith(("_archive", "_core")) for label in labels)
    first = next(c for c in result.items if c.label == "notes/reading-list.md")
    assert (first.detail, first.documentation, first.new_text) == ("no route yet", "**Reading list**",
                                                                   "notes/reading-list.md")
    a = next(c for c in result.items if c.label == "projects/a.md")
    assert a.documentation == "**A project**\n\n- The a project keeps its facts here."
    keys = next(c for c in result.items if c.label == "notes/keys.md")
    assert TOKEN not in keys.documentation and "preview hidden" in keys.documentation
    assert (first.start, first.end) == (char, char)


def test_completion_in_the_index_filters_wiki_links_and_whole_routes(fresh: Demo):
    line, char = _index_cursor(fresh, "- [[nts/rdl")
    (item,) = complete(fresh.state, "_index.md", line, char).items
    assert (item.label, item.new_text, item.start, item.end) == ("notes/reading-list.md", "notes/reading-list",
                                                                 4, char)
    line, char = _index_cursor(fresh, "- ")
    items = complete(fresh.state, "_index.md", line, char).items
    assert [(c.label, c.new_text) for c in items] == [
        ("notes/reading-list.md", "[Reading list](notes/reading-list.md) — Reading list")]
    line, char = _index_cursor(fresh, "Some prose")
    assert complete(fresh.state, "_index.md", line, char) is None


def test_completion_in_the_index_is_capped(fresh: Demo):
    line, char = _index_cursor(fresh, "- [x](")
    result = complete(fresh.state, "_index.md", line, char, limit=3)
    assert result.incomplete and [c.label for c in result.items][0] == "notes/reading-list.md"
    assert len(result.items) == 3


def test_completion_in_a_link_lists_the_folder_it_has_reached(fresh: Demo):
    rel = "notes/travel-2026.md"
    text = fresh.state.files[rel].text + "See [x](../pro"
    fresh.state.set_buffer(rel, text)
    line = len(fresh.state.doc(rel).lines) - 1
    result = complete(fresh.state, rel, line, len("See [x](../pro"))
    assert [c.label for c in result.items] == ["projects/"]
    assert (result.items[0].start, result.items[0].end) == (len("See [x](../"), len("See [x](../pro"))
    fresh.state.set_buffer(rel, text[: -len("pro")] + "projects/re")
    result = complete(fresh.state, rel, line, len("See [x](../projects/re"))
    labels = [c.label for c in sorted(result.items, key=lambda c: c.sort_text)]
    assert labels[:2] == ["recipe-search.md", "retail-pipeline.md"]  # prefix matches first
    assert "conference-talk.md" in labels[2:] and "harbour-analytics.md" not in labels  # then subsequences
    assert result.items[1].documentation.startswith("**Retail data pipeline — Fjällgården**\n\n- Client:")
    fresh.state.set_buffer(rel, text[: -len("../pro")])
    labels = [c.label for c in complete(fresh.state, rel, line, len("See [x](")).items]
    assert "travel-2026.md" not in labels and labels[:2] == ["airflow-tips.md", "keys.md"]
    assert "../" in labels


# -- symbols ---------------------------------------------------------------------------
def test_document_symbols_nest_headings_and_mark_the_summary(demo: Demo):
    (title,) = document_symbols(demo.state, "projects/retail-pipeline.md")
    assert (title.name, title.kind, title.line) == ("Retail data pipeline — Fjällgården", "title", 0)
    assert [(c.name, c.detail) for c in title.children] == [
        ("Summary", "summary · 5 bullets"), ("Context", ""), ("Sources", ""), ("Decisions", ""),
        ("Open questions", ""), ("Next steps", "")]
    summary = title.children[0]
    assert (summary.line, summary.end_line, summary.sel_start, summary.sel_end) == (6, 12, 3, 10)


def test_document_symbols_of_the_index_hold_its_routes(demo: Demo):
    (title,) = document_symbols(demo.state, "_index.md")
    projects, notes = title.children
    assert projects.name == "Projects" and projects.children[0].name == "projects/retail-pipeline.md"
    assert projects.children[0].detail == "nightly POS, webshop and ERP load into BigQuery with dbt"
    assert [c.name for c in notes.children][:2] == ["notes/airflow-tips.md", "notes/meal-planning.md"]


def test_workspace_symbols_match_fuzzily_and_rank_files_first(demo: Demo):
    found = workspace_symbols(demo.state, "rtlpipe")
    assert (found[0].name, found[0].kind, found[0].path) == ("Retail data pipeline — Fjällgården", "file",
                                                             "projects/retail-pipeline.md")
    found = workspace_symbols(demo.state, "calibration")
    assert [(s.name, s.path, s.line) for s in found] == [("Calibration", "projects/garden-sensors.md", 23)]
    assert len(workspace_symbols(demo.state, "e", limit=7)) == 7
    assert workspace_symbols(demo.state, "zzzqqq") == []


# -- rename ------------------------------------------------------------------------------
def test_renaming_a_file_updates_its_route_and_links_and_nothing_else(demo: Demo):
    result = rename_edits(demo.state, [("projects/a.md", "projects/b.md")])
    assert result.messages == []
    assert [(e.path, e.line, e.new_text) for e in result.edits] == [
        ("_index.md", demo.line_of("_index.md", "(projects/a.md)"), "projects/b.md"),
        ("notes/airflow-tips.md", demo.line_of("notes/airflow-tips.md", "../projects/a.md"), "../projects/b.md"),
        ("projects/recipe-search.md", demo.line_of("projects/recipe-search.md", "(a.md#summary)"), "b.md#summary"),
    ]
    for e in result.edits:
        assert demo.state.doc(e.path).lines[e.line][e.col:e.end_col] in ("projects/a.md", "../projects/a.md",
                                                                          "a.md#summary")


def test_moving_a_file_to_another_folder_rewrites_its_own_links(demo: Demo):
    result = rename_edits(demo.state, [("projects/a.md", "notes/a.md")])
    edits = {(e.path, e.new_text) for e in result.edits}
    assert edits == {("_index.md", "notes/a.md"), ("notes/airflow-tips.md", "a.md"),
                     ("projects/recipe-search.md", "../notes/a.md#summary"),
                     ("projects/a.md", "../projects/retail-pipeline.md")}


def test_renaming_a_folder_moves_everything_under_it(demo: Demo):
    result = rename_edits(demo.state, [("notes", "journal")])
    edits = [(e.path, e.new_text) for e in result.edits]
    assert ("_index.md", "journal/airflow-tips") in edits  # a wiki-link keeps leaving out `.md`
    assert ("projects/retail-pipeline.md", "../journal/airflow-tips.md") in edits
    # Links between two files of the moved folder stay as they are.
    assert not any(path.startswith("notes/") and "sichuan" in text for path, text in edits)
    assert ("notes/airflow-tips.md", "../projects/a.md") not in edits
    positions = [(e.path, e.line, e.col) for e in result.edits]
    assert len(positions) == len(set(positions))


def test_moves_into_or_out_of_the_archive_get_no_edits_but_a_message(demo: Demo):
    result = rename_edits(demo.state, [("projects/a.md", "_archive/projects/a.md")])
    assert result.edits == []
    assert "Archive action" in result.messages[0]
    result = rename_edits(demo.state, [("_archive/projects/ferry-ticket-etl.md", "projects/ferry-ticket-etl.md")])
    assert result.edits == [] and "Recover action" in result.messages[0]


# -- code lens and the reference graph ------------------------------------------------------
def test_code_lenses(demo: Demo):
    assert lens_kinds(demo.state, "_index.md") == ()
    assert lens_kinds(demo.state, "_core/profile.md") == ()
    rel = "projects/a.md"
    titles = [lens_title(demo.state, rel, kind) for kind in lens_kinds(demo.state, rel)]
    assert titles == ["routed", "3 references", "changed " + demo.stat_line(rel).rsplit(" ", 1)[-1]]
    assert lens_title(demo.state, "notes/reading-list.md", "routed") == "no route"


def test_the_reference_graph_follows_buffer_changes(fresh: Demo):
    assert len(ref_graph(fresh.state).refs_to("projects/a.md")) == 3
    rel = "notes/airflow-tips.md"
    fresh.state.set_buffer(rel, fresh.state.files[rel].text.replace("../projects/a.md", "../projects/gone.md"))
    graph = ref_graph(fresh.state)
    assert [r.source for r in graph.refs_to("projects/a.md")] == ["_index.md", "projects/recipe-search.md"]
    assert [r.source for r in graph.refs_to("projects/gone.md")] == [rel]
    (fresh.root / "projects/recipe-search.md").unlink()
    fresh.state.refresh("projects/recipe-search.md")
    assert [r.source for r in ref_graph(fresh.state).refs_to("projects/a.md")] == ["_index.md"]


@pytest.mark.parametrize("form, written, new_path, line, expected", [
    ("link", "./a.md#part", "b.md", "[x](./a.md#part)", "./b.md#part"),
    ("link", "../notes/", "../journal", "[x](../notes/)", "../journal/"),
    ("wiki", "projects/a", "projects/b.md", "- [[projects/a]] — x", "projects/b"),
    ("wiki", "projects/a.md", "projects/b.md", "- [[projects/a.md]] — x", "projects/b.md"),
    ("link", "my%20notes.md", "our notes.md", "[x](my%20notes.md)", "our%20notes.md"),
    ("link", "a.md", "new name.md", "[x](a.md)", "new%20name.md"),
    ("link", "a.md", "new name.md", "[x](<a.md>)", "new name.md"),
    ("angle", "a.md", "new name.md", "- <a.md> — x", "new name.md"),
])
def test_rewritten_paths_keep_how_they_were_written(form, written, new_path, line, expected):
    from pmem_lsp.engine.navigation.refs import Ref
    from pmem_lsp.engine.navigation.rename_edits import rewrite

    start = line.index(written)
    ref = Ref("x.md", 0, start, start + len(written), "link", form, written, "", "")
    assert rewrite(ref, new_path, line) == expected
