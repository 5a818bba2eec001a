"""A route's default title and description (docs/decisions.md, "Route titles and descriptions"),
on the shapes a trial on github/awesome-copilot and a Spanish Obsidian vault met, and the
route's target form in an index of bare paths."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pmem_lsp.engine.index_edit import reads_back, route_description, route_for, route_title
from pmem_lsp.engine.index_routes import parse_index
from pmem_lsp.engine.memory_file import MemoryFile
from pmem_lsp.engine.secrets import find_secrets

BARE_INDEX = "# Index\n\n## Notes\n- notes/a b.md — first\n- notes/c d.md — second\n- notes/e.md — third\n"
LINK_INDEX = "# Index\n\n- [A](notes/a.md) — first\n- [B](notes/b.md) — second\n"


def fm(body: str) -> str:
    return f"---\n{body}---\n\nBody text.\n"


@pytest.mark.parametrize(("front", "expected"), [
    ("description: Oqtane Module patterns\n", "Oqtane Module patterns"),
    ("description: 'Oqtane Module patterns'\n", "Oqtane Module patterns"),
    ("description: 'it''s a: colon'\n", "it's a: colon"),
    ('description: "say \\"hi\\" \\u00e9\\tthere"\n', 'say "hi" é there'),
    ("description: >-\n  Folded over\n  two lines\n", "Folded over two lines"),
    ("description: >\n  Folded\n\n  with a blank\n", "Folded with a blank"),
    ("description: |\n  Literal\n  lines\n", "Literal lines"),
    ("description: | # a comment\n  Literal\n", "Literal"),
    ("description: plain that\n  continues here\n", "plain that continues here"),
    ("description: 'quoted that\n  continues'\n", "quoted that continues"),
    ("description: value # a comment\n", "value"),
    ("description:   padded   words  \n", "padded words"),
    ("description: Patrones de módulo: añadir\n", "Patrones de módulo: añadir"),
    ("description: 日本語の説明\n", "日本語の説明"),
])
def test_front_matter_text_reads_the_yaml_shapes_a_description_takes(front: str, expected: str):
    doc = MemoryFile(fm(front + "applyTo: '**/*.cs'\n"))
    assert doc.front_matter_text("description") == expected
    assert doc.front_matter_text("applyTo") == "**/*.cs"


@pytest.mark.parametrize("front", [
    "description:\n", "description: ''\n", "description: [a, b]\n", "description: {a: b}\n",
    "description:\n  nested: map\n", "description:\n  - a\n  - b\n", "description: *alias\n",
])
def test_front_matter_text_is_none_for_what_is_not_text(front: str):
    assert MemoryFile(fm(front)).front_matter_text("description") is None


def test_front_matter_text_reads_only_the_front_matter_and_top_level_keys():
    assert MemoryFile("description: not front matter\n").front_matter_text("description") is None
    doc = MemoryFile(fm("meta:\n  title: nested\n"))
    assert doc.front_matter_text("title") is None


@pytest.mark.parametrize(("path", "text", "title", "description"), [
    # awesome-copilot: the front matter says what the file is.
    ("skills/boost-prompt/SKILL.md",
     "---\nname: boost-prompt\ndescription: 'Interactive prompt refinement workflow: interrogates scope, "
     "deliverables, constraints'\n---\n\n# Boost Prompt\n",
     "boost-prompt", "Interactive prompt refinement workflow: interrogates scope, deliverables, constraints"),
    ("instructions/oqtane.instructions.md",
     "---\ndescription: 'Oqtane Module patterns'\napplyTo: '**/*.razor, **/*.cs'\n---\n\n## Blazor\n",
     "oqtane.instructions", "Oqtane Module patterns"),
    ("agents/amplitude-experiment-implementation.agent.md",
     "---\nname: Amplitude Experiment Implementation\ndescription: >-\n  Implements experiments\n  with Amplitude.\n"
     "tools: ['read', 'edit']\n---\n\n## Instructions\n",
     "Amplitude Experiment Implementation", "Implements experiments with Amplitude."),
    ("projects/copilot-setup/AGENTS.md", "# AGENTS.md\n\nHow agents work here.\n", "AGENTS.md", None),
    ("projects/copilot-setup/AGENTS.md", "How agents work here.\n\n# Setup\n", "AGENTS", None),
    # An Obsidian note: its title is its file name; a heading further down is a section.
    ("Q6/AS/Prácticas/Import.md", "[[Elixir]] y [[Phoenix]]\n\n# 1.Definición\nTexto.\n", "Import", None),
    # An Excalidraw drawing: `# Text Elements` is the plugin's section, not the note's title.
    ("Excalidraw/Idea AS/idea Anton e Iván.md",
     "---\n\nexcalidraw-plugin: parsed\ntags: [excalidraw]\n\n---\n==⚠  Switch to EXCALIDRAW VIEW in the "
     "MORE OPTIONS menu of this document. ⚠==\n\n\n# Text Elements\nIdea ^a1b2c3\n",
     "idea Anton e Iván", None),
    # A title heading after blank lines and a comment is still the title.
    ("notes/kiln.md", "\n<!-- generated -->\n# Kiln firing log\n\n## Summary\n\n- Bisque runs to cone 04.\n",
     "Kiln firing log", "Bisque runs to cone 04."),
    # front matter `title:` beats the heading; the Summary beats front matter `description:`.
    ("日本/メモ.md", "---\ntitle: \"日本語のメモ\"\ndescription: 説明\n---\n# 見出し\n\n## 摘要\n\n- 最初の要点\n",
     "日本語のメモ", "最初の要点"),
    ("notes/s.md", "---\nsummary: >\n  What it holds\n---\n", "s", "What it holds"),
])
def test_title_and_description_of_real_shapes(path: str, text: str, title: str, description: str | None):
    doc = MemoryFile(text)
    assert route_title(doc, path) == title
    assert route_description(doc) == description
    for index in (BARE_INDEX, LINK_INDEX, ""):
        line = route_for(index, path, doc)
        assert reads_back(line, path), line
        assert line.endswith(f" — {description or title}")


def test_an_unreadable_file_is_titled_by_its_name():
    assert route_title(None, "Notas/Clase 3.md") == "Clase 3"
    assert route_description(None) is None


def test_the_description_asked_for_wins():
    doc = MemoryFile(fm("description: from the file\n"))
    assert route_for(BARE_INDEX, "notes/x.md", doc, "asked").endswith(" — asked")


@pytest.mark.parametrize(("path", "written"), [
    ("Name with space.md", "`Name with space.md`"),
    ("Plain.md", "Plain.md"),
    ("notes/f g.md", "notes/f g.md"),
])
def test_an_index_of_bare_paths_gets_no_link(path: str, written: str):
    """A bare path cannot hold a root-level name with spaces (`My note.md — x` is no route):
    the code span keeps the index's look, where a link did not."""
    line = route_for(BARE_INDEX, path, None)
    assert line == f"- {written} — {route_title(None, path)}"
    assert reads_back(line, path)


def test_an_index_of_links_keeps_links():
    assert route_for(LINK_INDEX, "Name with space.md", None) == "- [Name with space](<Name with space.md>) — Name with space"


# -- the route written reads back --------------------------------------------------------------
_segment = st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp"),
                                 exclude_characters="/\\\x00"), min_size=1, max_size=12).filter(
    # A path starting `~` or `$` is read as out of the root (home, a variable): no route names it.
    lambda s: s.strip() == s and s not in (".", "..") and not s.startswith(("~", "$")))
_words = st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp", "Zs")),
                 min_size=1, max_size=15)
_value = st.lists(_words, min_size=1, max_size=4).map(" ".join)


def _yaml(key: str, value: str, style: str) -> str:
    if style == "single":
        return f"{key}: '{value.replace(chr(39), chr(39) * 2)}'\n"
    if style == "double":
        return f'{key}: "' + value.replace("\\", "\\\\").replace('"', '\\"') + '"\n'
    return f"{key}: >-\n  " + "\n  ".join(value.split(" ")) + "\n"


@settings(max_examples=150, deadline=None)
@given(folders=st.lists(_segment, max_size=2), name=_segment, title=_value, description=_value,
       styles=st.tuples(*[st.sampled_from(["single", "double", "folded"])] * 2),
       index=st.sampled_from([BARE_INDEX, LINK_INDEX, ""]))
def test_the_route_written_reads_back(folders: list[str], name: str, title: str, description: str,
                                      styles: tuple[str, str], index: str):
    path = "/".join([*folders, name + ".md"])
    doc = MemoryFile("---\n" + _yaml("title", title, styles[0]) + _yaml("description", description, styles[1])
                     + "---\n\n# Heading\n")
    assert doc.front_matter_text("title") == " ".join(title.split())
    assert doc.front_matter_text("description") == " ".join(description.split())
    line = route_for(index, path, doc)
    assert reads_back(line, path), line
    assert "\n" not in line
    route = parse_index(MemoryFile(line + "\n")).routes[0]
    # The description is the file's, unless it held a likely secret (then the title, or the name).
    if not find_secrets([description]):
        assert route.description == " ".join(description.split())
