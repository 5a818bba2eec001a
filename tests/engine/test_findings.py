"""`Finding` (engine/findings.py): every finding's message is masked where it is made, so no
rule can quote a secret (docs/design.md §7) — whatever text of the memory it names."""

from __future__ import annotations

from engine_helpers import findings
from pmem_lsp.engine.findings import Finding
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
