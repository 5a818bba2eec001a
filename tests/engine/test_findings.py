"""`Finding` (engine/findings.py): every finding's message is masked where it is made, so no
rule can quote a secret (docs/design.md §7) — whatever text of the memory it names."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine_helpers import findings
from pmem_lsp.engine.findings import Finding, Severity
from roots import TOKEN, make_root


def test_a_finding_masks_a_secret_in_its_message():
    f = Finding("notes/a.md", 0, 0, 0, 1, "PM201", f"`notes/{TOKEN}.md` does not exist")
    assert TOKEN not in f.message and TOKEN[4:16] not in f.message
    assert f.message.startswith("`notes/") and f.message.endswith(".md` does not exist")


def test_a_message_without_a_secret_is_kept_as_it_is():
    message = "`notes/a b.md` does not exist"
    assert Finding("_index.md", 3, 2, 3, 20, "PM201", message).message is message


def test_rules_that_quote_paths_and_targets_never_show_a_token(tmp_path):
    """Real rules quoting text that holds a token: a dangling route (PM201) and a broken link
    (PM402). With the masking in `Finding` switched off, both messages show the token."""
    root = make_root(tmp_path, {"notes/links.md": f"# Links\n\nSee [the keys](keys-{TOKEN}.md).\n"})
    (root / "_index.md").write_text((root / "_index.md").read_text(encoding="utf-8")
                                    + f"- [Gone](notes/{TOKEN}.md) — a route to nowhere\n", encoding="utf-8")
    found = findings(root)
    quoting = {f.code for f in found if f.code in ("PM201", "PM402")}
    assert quoting == {"PM201", "PM402"}, [(f.code, f.message) for f in found]
    assert all(TOKEN not in f.message and TOKEN[4:16] not in f.message for f in found)


def test_the_same_message_is_masked_each_time_it_is_made():
    # Maskings are remembered per message (engine/findings.py `_masked`): the second finding
    # with a secret in its message is masked as the first was.
    message = f"`notes/{TOKEN}.md` does not exist"
    first, second = (Finding("notes/a.md", 0, 0, 0, 1, "PM201", message) for _ in range(2))
    assert TOKEN[4:16] not in second.message and second.message == first.message


def test_with_severity_is_replace_of_every_field():
    from dataclasses import fields, replace

    from pmem_lsp.engine.findings import Severity
    f = Finding("notes/a.md", 1, 2, 3, 4, "PM201", "m", Severity.HINT, {"k": 1})
    assert [x.name for x in fields(Finding)] == ["path", "line", "col", "end_line", "end_col", "code", "message",
                                                 "severity", "data"], "a new field: pass it on in with_severity"
    got = f.with_severity(Severity.ERROR)
    assert got == replace(f, severity=Severity.ERROR) and got.data is f.data and got.severity is Severity.ERROR


def test_with_severity_sets_every_slot_and_masks_as_a_new_finding_would():
    from dataclasses import replace

    from pmem_lsp.engine.findings import SORT_KEY, WITH_SEVERITY_SLOTS, Severity
    assert Finding.__slots__ == WITH_SEVERITY_SLOTS, "a new slot: set it in with_severity"
    for message in ("plain", f"`notes/{TOKEN}.md` does not exist"):
        f = Finding("notes/a.md", 1, 2, 3, 4, "PM201", message, None, {"k": 1})
        for severity in (*Severity, None):
            got = f.with_severity(severity)
            want = replace(f, severity=severity)
            assert got == want and hash(got) == hash(want) and repr(got) == repr(want)
            assert all(getattr(got, n) is getattr(want, n) or getattr(got, n) == getattr(want, n)
                       for n in WITH_SEVERITY_SLOTS)
            assert SORT_KEY(got) == got.sort_key() == (got.path, got.line, got.col, got.code, got.message)


@settings(max_examples=200, deadline=None)
@given(path=st.text(max_size=20), numbers=st.tuples(*[st.integers(0, 10**6)] * 4), code=st.sampled_from(["PM202", "PM100"]),
       message=st.text(max_size=30) | st.sampled_from([f"`notes/{TOKEN}.md` does not exist", "plain"]),
       severity=st.sampled_from([None, *Severity]), data=st.none() | st.just({"k": 1}))
def test_made_is_a_finding_made_the_plain_way(path, numbers, code, message, severity, data):
    # `made` (engine/findings.py) sets the slots itself, for the findings made in thousands;
    # `at_line` and `entry_finding` make theirs with it.
    from pmem_lsp.engine.findings import WITH_SEVERITY_SLOTS, made
    got = made(path, *numbers, code, message, severity, data)
    want = Finding(path, *numbers, code, message, severity, data)
    assert type(got) is Finding and got == want and hash(got) == hash(want) and repr(got) == repr(want)
    assert all(getattr(got, n) == getattr(want, n) for n in WITH_SEVERITY_SLOTS)
    assert TOKEN[4:16] not in got.message


def test_whole_file_findings_are_made_the_plain_way(tmp_path):
    from pmem_lsp.engine.findings import at_line, entry_finding, file_finding
    from pmem_lsp.engine.root_state import RootState
    from pmem_lsp.engine.settings import Settings
    root = make_root(tmp_path, {"notes/titled.md": "---\nx: 1\n---\n\n  # Title  \n\nText.\n",
                                "notes/untitled.md": "No title here.\n", "notes/empty.md": ""})
    state = RootState.scan(root, Settings())
    for rel in ("notes/titled.md", "notes/untitled.md", "notes/empty.md"):
        entry = state.files.get(rel)
        doc = entry.doc
        assert entry_finding(entry, "PM202", "m") == file_finding(rel, doc, "PM202", "m")
        line = doc.title.line if doc.title else 0
        text = doc.lines[line] if doc.lines else ""
        want = Finding(rel, line, len(text) - len(text.lstrip()), line, len(text.rstrip()), "PM202", "m")
        assert entry_finding(entry, "PM202", "m") == want == at_line(rel, doc.lines, line, "PM202", "m")


@settings(max_examples=500, deadline=None)
@given(text=st.text(st.sampled_from("ab #\n\r\t"), max_size=30), line=st.integers(-2, 12), split=st.booleans())
def test_line_of_is_the_line_of_the_split_text(text, line, split):
    # A whole-file finding's line is read out of the text where no rule has split it
    # (engine/line_index.py `line_of`): the line `split_lines` gives, "" past the last.
    from pmem_lsp.engine.line_index import line_of, split_lines
    lines = split_lines(text)
    want = lines[line] if 0 <= line < len(lines) else ""
    assert line_of(text, line, lines if split else None) == want
