"""Settings (docs/design.md §5): selection, severities, `.pmem.toml`, editor overrides, exclude."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from bounded import finishes
from engine_helpers import findings, rows, scan
from pmem_lsp.engine.findings import Severity
from pmem_lsp.engine.globs import GlobSet
from pmem_lsp.engine.settings import Settings, SettingsError, resolve_settings
from pmem_lsp.engine.settings_defaults import DEFAULTS, default_settings, settings_data, settings_for
from roots import active_file, make_root

# One root with findings from several families:
#   _index.md:6 PM201 (error), notes/x.md:0 PM100 (hint) + PM202 (warning), notes/y.md:4 PM102 (warning),
#   notes/y.md:9 PM402 (warning), _archive/projects/old.md:0 PM301 (warning)
PROBLEMS = {
    "_index.md": ("# Index\n\n- [A](projects/alpha.md) — a\n- [B](notes/beta.md) — b\n"
                  "- [Y](notes/y.md) — y\n\n- [G](notes/gone.md) — gone\n"),
    "notes/x.md": "# X\n\nNo summary and no route.\n",
    "notes/y.md": "# Y\n\nStatus: active\n\n## Summary\n- only one\n\n## Links\n\n[z](z.md)\n",
    "_archive/projects/old.md": "# Old\n",
}
ALL = [
    ("_archive/projects/old.md", 0, "PM301", "warning"),
    ("_index.md", 6, "PM201", "error"),
    ("notes/x.md", 0, "PM100", "hint"),
    ("notes/x.md", 0, "PM202", "warning"),
    ("notes/y.md", 4, "PM102", "warning"),
    ("notes/y.md", 9, "PM402", "warning"),
]


@pytest.fixture
def root(tmp_path):
    return make_root(tmp_path, PROBLEMS)


def test_defaults(root):
    assert rows(findings(root), severity=True) == ALL
    s = Settings()
    assert (s.select, s.ignore, s.severity, s.exclude) == (["PM"], [], {}, [])
    assert (s.core.max_bytes, s.index.max_lines, s.index.max_bytes, s.large_file.kb, s.stale.days) == (
        8192, 200, 16384, 256, 90)


def _read_as_the_model_is_read(model: object, plain: object) -> None:
    """Every field of the model, read on the plain defaults, is the model's value; a section is
    compared field by field (it is read as `settings.core.max_bytes`)."""
    for name in type(model).model_fields:  # type: ignore[attr-defined]
        want, got = getattr(model, name), getattr(plain, name)
        if hasattr(type(want), "model_fields"):
            _read_as_the_model_is_read(want, got)
        else:
            assert got == want and type(got) is type(want), name


def test_the_defaults_without_the_model_are_the_models_defaults():
    # A default changed in settings.py and not in settings_defaults.DEFAULTS fails here.
    model = Settings()
    assert model.model_dump() == DEFAULTS
    plain = default_settings()
    _read_as_the_model_is_read(model, plain)
    assert settings_data(plain) == settings_data(model)  # what the per-file records are keyed by
    assert plain.secrets.allow_patterns == model.secrets.allow_patterns == []
    for code in ("PM100", "PM206", "PM209", "PM401", "PM503", "XX1"):
        assert plain.enabled(code) == model.enabled(code) and plain.severity_for(code) is None
    assert not plain.excluded("notes/a.md") and not model.excluded("notes/a.md")
    with pytest.raises(AttributeError):
        plain.core.max_bytes = 1  # type: ignore[misc]
    plain.select.append("XX")  # a reader's change to a list stays its own, as with the model's factories
    assert default_settings().select == ["PM"]


def test_settings_for_validates_only_a_root_that_has_settings(tmp_path):
    (tmp_path / "plain").mkdir()
    assert not isinstance(settings_for(tmp_path / "plain"), Settings)
    (tmp_path / "tuned").mkdir()
    (tmp_path / "tuned/.pmem.toml").write_text("[stale]\ndays = 3\n", encoding="utf-8")
    tuned = settings_for(tmp_path / "tuned")
    assert isinstance(tuned, Settings) and tuned.stale.days == 3
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad/.pmem.toml").write_text("[stale]\ndays = 0\n", encoding="utf-8")
    with pytest.raises(SettingsError, match="stale"):
        settings_for(tmp_path / "bad")
    (tmp_path / "unreadable").mkdir()
    (tmp_path / "unreadable/.pmem.toml").mkdir()  # there, but not a file: an error, never the defaults
    with pytest.raises(SettingsError):
        settings_for(tmp_path / "unreadable")


# -- select / ignore ------------------------------------------------------------------------


@pytest.mark.parametrize("overrides, codes", [
    ({"select": ["PM2"]}, ["PM201", "PM202"]),
    ({"select": ["PM20"]}, ["PM201", "PM202"]),
    ({"select": ["PM201"]}, ["PM201"]),
    ({"select": ["pm1", "PM4"]}, ["PM100", "PM102", "PM402"]),
    ({"ignore": ["PM1"]}, ["PM301", "PM201", "PM202", "PM402"]),
    ({"ignore": ["PM202", "PM3"]}, ["PM201", "PM100", "PM102", "PM402"]),
    ({"select": ["PM2"], "ignore": ["PM202"]}, ["PM201"]),
    ({"select": ["PM201"], "ignore": ["PM2"]}, []),  # ignore wins over select
    ({"select": []}, []),
    ({"ignore": ["PM"]}, []),
])
def test_select_and_ignore_prefixes(root, overrides, codes):
    assert [f.code for f in findings(root, overrides)] == codes


def test_enabled():
    s = Settings(select=["PM1", "PM201"], ignore=["PM10"])
    assert [c for c in ("PM100", "PM107", "PM110", "PM201", "PM202") if s.enabled(c)] == ["PM110", "PM201"]


# -- severity overrides ---------------------------------------------------------------------


def test_per_rule_severity_override(root):
    found = findings(root, {"severity": {"PM202": "error", "pm201": "information", "PM100": "warning"}})
    assert rows(found, severity=True) == [
        ("_archive/projects/old.md", 0, "PM301", "warning"),
        ("_index.md", 6, "PM201", "information"),
        ("notes/x.md", 0, "PM100", "warning"),
        ("notes/x.md", 0, "PM202", "error"),
        ("notes/y.md", 4, "PM102", "warning"),
        ("notes/y.md", 9, "PM402", "warning"),
    ]


def test_severity_override_beats_a_rule_decided_severity(tmp_path):
    # PM303 on a legacy record is information by the rule's own choice; the user's choice wins.
    archive = ("# Archive index\n\n## projects/old.md\n- status: archived\n- original: projects/old.md\n"
               "- location: _archive/projects/old.md\n- archived: 2026-01-01\n")
    root = make_root(tmp_path, {"_archive/_index.md": archive, "_archive/projects/old.md": "# Old\n"})
    assert rows(findings(root), severity=True) == [("_archive/_index.md", 2, "PM303", "information")]
    assert rows(findings(root, {"severity": {"PM303": "hint"}}), severity=True) == [
        ("_archive/_index.md", 2, "PM303", "hint")]


# -- .pmem.toml and editor overrides --------------------------------------------------------


def test_pmem_toml_is_read_from_the_root(tmp_path):
    toml = ('select = ["PM2", "PM4"]\nignore = ["PM202"]\n\n[severity]\nPM402 = "error"\n\n'
            '[core]\nmaxBytes = 100\n\n[index]\nmaxLines = 50\nmax_bytes = 1000\n\n'
            '[largeFile]\nkb = 10\n\n[stale]\ndays = 30\n')
    root = make_root(tmp_path, {**PROBLEMS, ".pmem.toml": toml})
    s = resolve_settings(root)
    assert (s.select, s.ignore, s.severity) == (["PM2", "PM4"], ["PM202"], {"PM402": Severity.ERROR})
    assert (s.core.max_bytes, s.index.max_lines, s.index.max_bytes, s.large_file.kb, s.stale.days) == (
        100, 50, 1000, 10, 30)
    # `.pmem.toml` is hidden: never reported as raw material.
    assert rows(findings(root), severity=True) == [("_index.md", 6, "PM201", "error"),
                                                   ("notes/y.md", 9, "PM402", "error")]


def test_editor_overrides_win_key_by_key(tmp_path):
    toml = 'ignore = ["PM1"]\n[core]\nmaxBytes = 100\n[index]\nmaxLines = 5\n[severity]\nPM201 = "hint"\nPM202 = "hint"\n'
    root = make_root(tmp_path, {**PROBLEMS, ".pmem.toml": toml})
    editor = {"core": {"maxBytes": 20000}, "ignore": ["PM3", "PM4"], "severity": {"PM202": "error"}}
    s = resolve_settings(root, editor)
    assert s.core.max_bytes == 20000  # overridden
    assert s.index.max_lines == 5  # kept from the file
    assert s.ignore == ["PM3", "PM4"]  # lists are replaced, not merged
    assert s.severity == {"PM201": Severity.HINT, "PM202": Severity.ERROR}  # tables are merged
    # Without the editor's settings, the file's `core.maxBytes = 100` applies.
    assert ("_core/profile.md", 0, "PM004") in rows(findings(root))
    found = findings(root, editor)
    assert rows(found, severity=True) == [
        ("_index.md", 0, "PM006", "warning"),  # maxLines = 5 from the file
        ("_index.md", 6, "PM201", "hint"),
        ("notes/x.md", 0, "PM100", "hint"),
        ("notes/x.md", 0, "PM202", "error"),
        ("notes/y.md", 4, "PM102", "warning"),
    ]


def test_snake_case_and_camel_case_are_both_accepted(tmp_path):
    s = resolve_settings(tmp_path, {"core": {"max_bytes": 5}, "large_file": {"kb": 3}, "index": {"maxLines": 7}})
    assert (s.core.max_bytes, s.large_file.kb, s.index.max_lines) == (5, 3, 7)


def test_editor_override_wins_across_spellings(tmp_path):
    (tmp_path / ".pmem.toml").write_text("[core]\nmax_bytes = 100\n")
    assert resolve_settings(tmp_path, {"core": {"maxBytes": 200}}).core.max_bytes == 200


def test_no_settings_file_gives_defaults(tmp_path):
    assert resolve_settings(tmp_path) == Settings()


def test_empty_settings_file_gives_defaults(tmp_path):
    (tmp_path / ".pmem.toml").write_text("")
    assert resolve_settings(tmp_path) == Settings()


# -- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("toml, detail", [
    ("select = [", "not valid TOML (Invalid value (at end of document))"),
    ("[core\nmaxBytes = 1", "not valid TOML ("),
    ("colour = 1", "colour: Extra inputs are not permitted"),
    ("[core]\nmaxByte = 1", "core.maxByte: Extra inputs are not permitted"),
    ('[secrets]\nenabled = true\nallowed = ["x"]', "secrets.allowed: Extra inputs are not permitted"),
    ('select = ["XX1"]', "select: Value error, not a rule code or prefix: XX1"),
    ('ignore = ["PM1234"]', "ignore: Value error, not a rule code or prefix: PM1234"),
    ('[severity]\nPM202 = "loud"', "severity.PM202: Input should be 'error', 'warning', 'information' or 'hint'"),
    ('[severity]\nPM2 = "error"', "severity: Value error, not a rule code: PM2"),
    ('select = ["PM9"]', "select: Value error, no rule has the code or prefix PM9 (the rules: PM001–PM007, "),
    ('ignore = ["PM40", "PM408"]', "ignore: Value error, no rule has the code or prefix PM408 (the rules: "),
    ('[severity]\nPM999 = "error"', "severity: Value error, no rule has the code PM999 (the rules: "),
    ("[core]\nmaxBytes = -1", "core.maxBytes: Input should be greater than or equal to 0"),
    ("[index]\nmaxLines = 0", "index.maxLines: Input should be greater than or equal to 1"),
    ('exclude = "drafts"', "exclude: Input should be a valid list"),
])
def test_bad_settings_file_raises_a_clear_error(tmp_path, toml, detail):
    (tmp_path / ".pmem.toml").write_text(toml)
    with pytest.raises(SettingsError) as info:
        resolve_settings(tmp_path)
    message = str(info.value)
    assert message.startswith(f"{tmp_path / '.pmem.toml'}: ")
    assert detail in message


def test_settings_file_that_is_not_utf8(tmp_path):
    (tmp_path / ".pmem.toml").write_bytes(b"\xff\xfeselect = []")
    with pytest.raises(SettingsError, match=r"\.pmem\.toml: not valid TOML \('utf-8' codec can't decode"):
        resolve_settings(tmp_path)


def test_settings_file_that_is_a_folder(tmp_path):
    (tmp_path / ".pmem.toml").mkdir()
    with pytest.raises(SettingsError, match=r"\.pmem\.toml: cannot be read \("):
        resolve_settings(tmp_path)


def test_bad_editor_settings_raise_a_clear_error(tmp_path):
    with pytest.raises(SettingsError) as info:
        resolve_settings(tmp_path, {"bogus": 1, "stale": {"days": 0}})
    assert str(info.value) == ("editor settings: stale.days: Input should be greater than or equal to 1; "
                               "bogus: Extra inputs are not permitted")


# -- exclude --------------------------------------------------------------------------------


@pytest.mark.parametrize("glob, rel, excluded", [
    ("notes/*.md", "notes/x.md", True),
    ("notes/*.md", "notes/a/x.md", False),  # `*` does not cross folders
    ("notes/**", "notes/a/x.md", True),
    ("**/tmp-*.md", "tmp-1.md", True),
    ("**/tmp-*.md", "a/b/tmp-2.md", True),
    ("*.md", "top.md", True),
    ("*.md", "notes/x.md", False),
    ("drafts", "drafts", True),
    ("drafts", "drafts/x.md", True),  # a folder covers its files
    ("drafts/", "drafts/deep/x.md", True),
    ("./drafts", "drafts/x.md", True),
    ("drafts", "draftsx/y.md", False),
    ("drafts", "x/drafts/y.md", False),  # anchored at the root
    ("note?.md", "notes.md", True),
    ("note?.md", "note/.md", False),
    ("**", "a/b/c.md", True),
    ("notes/**", "notes", False),  # `notes/**` is what is in notes/ (but `notes` would cover it)
    ("a/**/b", "a/b", True),  # `**/` may stand for no folder at all
    ("a/**/b", "a/x/y/b/c.md", True),
    ("a/**/b", "a/xb", False),
    ("**/**/**/drafts", "drafts/x.md", True),
    ("**/**/**/drafts", "p/q/drafts", True),
    ("**/d/**/x", "d/x", True),
    ("**/d/**/x", "d/d/d/n.md", False),
    ("a**b", "a/x/b", True),  # `**` inside a name still crosses folders
    ("*/", "notes/x.md", True),
    ("notes/*.md", "notes/a\nb.md", True),  # a newline in a name is a character like any other
    ("notes/**", "notes/a\nb.md", True),
    ("drafts", "drafts\n", False),
])
def test_exclude_globs(glob, rel, excluded):
    assert Settings(exclude=[glob]).excluded(rel) is excluded


def _old_glob_to_regex(glob: str) -> str:
    """The regular expression exclude globs were compiled to before they were matched by an
    automaton. It backtracks catastrophically on deep paths, so it is the oracle for small ones."""
    glob = glob.strip().removeprefix("./")
    out = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out).rstrip("/") + "(?:/.*)?$"


def _old_excluded(globs: list[str], rel: str) -> bool:
    return any(re.match(_old_glob_to_regex(g), rel) for g in globs)


_GLOB = st.lists(st.sampled_from(["**/", "**", "*", "?", "a", "b", "/", ".", "./", " ", "a/", "*/"]),
                 max_size=8).map("".join)
# Paths without a newline, which the old expression's `.` and `$` treated specially.
_PATH = st.text(alphabet="ab/.*? ", max_size=12)


@hypothesis_settings(max_examples=400, deadline=None)
@given(globs=st.lists(_GLOB, min_size=1, max_size=3), paths=st.lists(_PATH, min_size=1, max_size=12))
def test_exclude_globs_match_as_the_old_regular_expressions_did(globs, paths):
    settings = Settings(exclude=globs)
    for rel in paths:
        assert settings.excluded(rel) is _old_excluded(globs, rel), (globs, rel)


def test_exclude_matcher_forgets_its_states_and_still_matches(monkeypatch):
    monkeypatch.setattr(GlobSet, "_MAX_SIZE", 5)
    globs = ["**/a*b/**/c", "x?/**", "*.md"]
    settings = Settings(exclude=globs)
    paths = ["a/ab/c", "q/axb/r/s/c/t", "xy/z", "x/z", "top.md", "a/top.md", "ab/c", "b/a/b/c"] * 3
    assert [settings.excluded(p) for p in paths] == [_old_excluded(globs, p) for p in paths]


_DEEP = "/".join(["d"] * 40) + "/n.md"
# (glob, a path it covers): each took seconds to hours as a regular expression on a deep path.
_PATHOLOGICAL = [
    ("**/" * 14 + "drafts", "/".join(["a"] * 40) + "/drafts/y.md"),
    ("**/d/**/d/**/d/**/d/**/x", _DEEP.replace("n.md", "x")),
    ("**/d/" * 8 + "**/x", _DEEP.replace("n.md", "x")),
    ("**/*d/" * 8 + "**/x", _DEEP.replace("n.md", "x")),
    ("**d" * 8 + "**x", _DEEP.replace("n.md", "x")),
    ("*d" * 10 + "*x/**", "d" * 250 + "x/n.md"),
    ("**/" * 30 + "?" * 50, "a/b/" + "c" * 50),
]


class _StepCounter:
    """Counts the automaton's work: the characters of every path matched, each `_step` (a
    character read for the first time from a state set) and the NFA states it looks at.
    Linear means at most one step per character matched, each looking at no more states than
    the globs have — however deep the path and whatever the globs."""

    def __init__(self, monkeypatch) -> None:
        self.characters = self.steps = self.states_seen = self.largest_nfa = 0
        step, match = GlobSet._step, GlobSet.match

        def counted_step(glob_set, dstate, ch):
            self.steps += 1
            self.states_seen += len(dstate.nfa)
            self.largest_nfa = max(self.largest_nfa, len(glob_set._kind))
            return step(glob_set, dstate, ch)

        def counted_match(glob_set, rel):
            self.characters += len(rel)
            return match(glob_set, rel)

        monkeypatch.setattr(GlobSet, "_step", counted_step)
        monkeypatch.setattr(GlobSet, "match", counted_match)

    def assert_linear(self) -> None:
        assert 0 < self.steps <= self.characters
        assert self.states_seen <= self.characters * self.largest_nfa


@pytest.mark.parametrize("glob, covered", _PATHOLOGICAL)
def test_exclude_globs_match_deep_paths_in_linear_time(glob, covered, monkeypatch):
    counter = _StepCounter(monkeypatch)
    settings = Settings(exclude=[glob])
    paths = (_DEEP, "d" * 250 + "/n.md", covered)
    results = finishes(lambda: [settings.excluded(p) for p in paths], f"matching {glob!r}")
    assert results == [False, False, True]
    counter.assert_linear()


def test_scan_with_pathological_excludes_on_a_deep_root_finishes(tmp_path, monkeypatch):
    deep = "/".join(["d"] * 40)
    root = make_root(tmp_path, {f"{deep}/n.md": active_file("N"), f"{deep}/x": "raw\n"})
    counter = _StepCounter(monkeypatch)
    globs = [glob for glob, _covered in _PATHOLOGICAL]
    state = finishes(lambda: scan(root, {"exclude": globs}), "a scan with pathological excludes")
    finishes(lambda: findings(root, {"exclude": globs}), "a check with pathological excludes")
    assert f"{deep}/n.md" in state.files
    assert state.excluded == {f"{deep}/x"}
    counter.assert_linear()


def test_active_file_in_an_unusual_folder(tmp_path):
    root = make_root(tmp_path, {"people/ada.md": active_file("Ada")})
    assert findings(root) == []


def test_a_settings_file_that_is_a_fifo_or_a_link_to_nothing_is_an_error_not_a_wait(tmp_path):
    """Unreadable is not missing, and a FIFO put there must not hang every command (a review)."""
    import os

    fifo = tmp_path / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / ".pmem.toml")
    def read() -> str:
        try:
            resolve_settings(fifo)
        except SettingsError as exc:
            return str(exc)
        return "no error"
    assert "not a regular file" in finishes(read, "reading a FIFO as the settings")
    link = tmp_path / "link"
    link.mkdir()
    (link / ".pmem.toml").symlink_to(link / "missing.toml")
    with pytest.raises(SettingsError, match="symbolic link to nothing"):
        settings_for(link)


# -- a likely secret in the settings is never quoted back -----------------------------------
GITHUB_TOKEN = "ghp_" + "J7QX2M4RZ8KD5N3VJ7QX2M4RZ8KD5N3Vabcd"  # a GitHub token's shape


@pytest.mark.parametrize("toml", [
    f'[severity]\n{GITHUB_TOKEN} = "error"\n',  # "not a rule code: …"
    f'select = ["PM1", "{GITHUB_TOKEN}"]\n',  # upper-cased it would no longer look like a token
    f'ignore = ["{GITHUB_TOKEN}"]\n',
    f'{GITHUB_TOKEN} = 1\n',  # an unknown key, respelled in camelCase with its `_` dropped
    f'[core]\n{GITHUB_TOKEN} = 1\n',
    f'[severity]\nPM202 = "{GITHUB_TOKEN}"\n',
    f'[secrets]\nallow = ["{GITHUB_TOKEN}("]\n',  # not a regular expression
    f'dialect = "{GITHUB_TOKEN}"\n',
    f'{GITHUB_TOKEN}\n',  # not TOML
])
def test_a_settings_error_never_quotes_a_secret(tmp_path, toml: str):
    root = make_root(tmp_path)
    (root / ".pmem.toml").write_text(toml, encoding="utf-8")
    with pytest.raises(SettingsError) as resolved:
        resolve_settings(root)
    from pmem_lsp.engine.settings import settings_from_text

    with pytest.raises(SettingsError) as parsed:
        settings_from_text(toml)
    for exc in (resolved.value, parsed.value):
        message = str(exc)
        assert ".pmem.toml" in message
        for shape in (GITHUB_TOKEN, GITHUB_TOKEN.upper(), GITHUB_TOKEN.replace("_", ""), GITHUB_TOKEN[8:24],
                      GITHUB_TOKEN[8:24].upper()):
            assert shape not in message, message


def test_a_settings_error_still_names_what_is_wrong(tmp_path):
    root = make_root(tmp_path)
    (root / ".pmem.toml").write_text('select = ["pm9", "nope"]\n[severity]\nPMX = "error"\n', encoding="utf-8")
    with pytest.raises(SettingsError) as raised:
        resolve_settings(root)
    assert "not a rule code or prefix: nope" in str(raised.value) and "not a rule code: PMX" in str(raised.value)
    (root / ".pmem.toml").write_text("max_bytes_typo = 1\n", encoding="utf-8")
    with pytest.raises(SettingsError) as raised:
        resolve_settings(root)
    assert "max_bytes_typo" in str(raised.value), "the key as the file spells it"
