//! `link_route`: the routes most index lines are, read without the regular expressions of
//! `read_route_text` (pmem_lsp/engine/index_routes.py; group `routes` of native_mirrors.py,
//! docs/native.md):
//!
//! - a link, `[Title](folder/file.md) — description` or `[Title](<folder/a b.md>) — …`;
//! - a bare angle target, `<folder/a b.md> — …` (`_RE_ANGLE`);
//! - a code span, `` `folder/a b.md` — … `` (`_RE_CODE`, `_code_target`);
//! - a wiki link, `[[folder/a b]] — …` or `[[folder/a b|label]] — …` (`_RE_WIKI`).
//!
//! It answers only where the Python reading is certain to be that route and its path the
//! target as written (a wiki link's with `.md` added): link text without `[`, `]` or `\`; a
//! target of no `%`, `#`, `?` or `:` (nor, where spaces may be in it, bracket, backtick or
//! `\`), no white space at its edges (none at all in a plain link's), and made of plain
//! folder names (no `.`, `..` or empty part, not absolute), which `normalize_target` gives
//! back unchanged. Anything else — emphasis, a title, an escape, a percent-encoded path, a
//! code span CommonMark would trim — is None, and the Python code reads the line. Python's
//! `\s`, `str.split()` and `str.strip()` are the same set (`is_py_space`), so the spans and
//! the description are those Python computes, counted in characters as Python's indexes are.

use pyo3::prelude::*;
use pyo3::types::PyString;

use super::{is_py_space, py_strip};

/// The route's form, an index into index_routes.py's `_CORE_FORMS` (so the Route holds the
/// Python constants themselves).
const LINK: u8 = 0;
const ANGLE: u8 = 1;
const CODE_SPAN: u8 = 2;
const WIKI: u8 = 3;

/// (form, path start, path end, the path where it is not the written `text[start:end]`,
/// description).
type CoreRoute = (u8, usize, usize, Option<String>, String);

/// `_description` of index_routes.py: the text after the target, stripped, without one
/// leading separator.
fn description(rest: &str) -> &str {
    let rest = py_strip(rest);
    match rest.chars().next() {
        Some(c @ ('—' | '–' | '-' | ':' | '：' | '|')) => py_strip(&rest[c.len_utf8()..]),
        _ => rest,
    }
}

/// Whether `normalize_target` gives `target` itself back, with no problem: relative, plain
/// parts only, nothing `strip`, `unquote`, `strip_fragment`, the scheme or drive checks or
/// `posixpath.normpath` would change or refuse. White space inside is a name's (`a b.md`).
fn plain_path(target: &str) -> bool {
    if target.is_empty() || target.starts_with(['~', '\\', '$']) {
        return false;
    }
    if target.starts_with(is_py_space) || target.ends_with(is_py_space) {
        return false;
    }
    if target.bytes().any(|b| matches!(b, b'%' | b'#' | b'?' | b':')) {
        return false;
    }
    target.split('/').all(|part| !part.is_empty() && part != "." && part != "..")
}

/// `plain_path` for the forms that allow white space in a path (`<…>`, a code span, a wiki
/// link): a bracket, a backtick, `\` or a line break there may be another form's or an escape,
/// so Python reads it.
fn plain_spaced_path(target: &str) -> bool {
    plain_path(target) && !target.bytes().any(|b| matches!(b, b'\\' | b'[' | b']' | b'`' | b'\n'))
}

/// Python's `s.lower().endswith(".md")`: no character but `.`, `M`, `m`, `D`, `d` lowers to a
/// text ending in `.`, `m` or `d`, so the last three characters decide.
fn ends_in_md(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 3 && b[b.len() - 3..].eq_ignore_ascii_case(b".md")
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// The route whose path is `text[at..at + len]` (bytes) and whose target ends at byte `end`.
fn route(text: &str, form: u8, at: usize, len: usize, end: usize, path: Option<String>) -> CoreRoute {
    let start = chars(&text[..at]);
    (form, start, start + chars(&text[at..at + len]), path, description(&text[end..]).to_owned())
}

/// `[[path]]` or `[[path|label]]` (`_RE_WIKI`): the path runs to the first `]` or `|`, a
/// label to the first `]`, and `]]` closes it. A `[` or `\` (the escaped `\|` of a table
/// row), or a path with `#`, is left to Python.
fn wiki_route(text: &str) -> Option<CoreRoute> {
    let bytes = text.as_bytes();
    let path_end = 2 + bytes[2..].iter().position(|&b| matches!(b, b']' | b'|' | b'[' | b'\\' | b'\n'))?;
    let close = match bytes[path_end] {
        b']' => path_end,
        b'|' => path_end + 1 + bytes[path_end + 1..].iter().position(|&b| matches!(b, b']' | b'[' | b'\n'))?,
        _ => return None,
    };
    if bytes[close] != b']' || bytes.get(close + 1) != Some(&b']') {
        return None;
    }
    let written = &text[2..path_end];
    if !plain_spaced_path(written) {
        return None;
    }
    // `.md` is optional in a wiki link: read_route_text adds it where it is missing.
    let path = if ends_in_md(written) { None } else { Some(format!("{written}.md")) };
    Some(route(text, WIKI, 2, written.len(), close + 2, path))
}

/// `[Title](target)` or `[Title](<target>)` with nothing between the parentheses but the
/// target (`RE_INLINE_LINK`).
fn inline_link_route(text: &str) -> Option<CoreRoute> {
    let bytes = text.as_bytes();
    // The link text runs to the first `]`; `[` and `\` in it are the regular expression's
    // nested and escaped brackets, left to Python.
    let close = 1 + bytes[1..].iter().position(|&b| matches!(b, b']' | b'[' | b'\\'))?;
    if bytes[close] != b']' || bytes.get(close + 1) != Some(&b'(') {
        return None;
    }
    let target_at = close + 2;
    if bytes.get(target_at) == Some(&b'<') {
        // `<…>` holds anything but `<`, `>` and a line break; only `)` may follow it here (a
        // title, or white space before `)`, is left to Python).
        let len = bytes[target_at + 1..].iter().position(|&b| matches!(b, b'<' | b'>' | b'\n'))?;
        let after = target_at + 1 + len;
        if bytes[after] != b'>' || bytes.get(after + 1) != Some(&b')') {
            return None;
        }
        if !plain_spaced_path(&text[target_at + 1..after]) {
            return None;
        }
        return Some(route(text, LINK, target_at + 1, len, after + 2, None));
    }
    let mut target_len = None;
    for (i, c) in text[target_at..].char_indices() {
        if c == ')' {
            target_len = Some(i);
            break;
        }
        if matches!(c, '(' | '<' | '>') || is_py_space(c) {
            return None; // a nested pair, a title: the Python reading
        }
    }
    let len = target_len?;
    if !plain_path(&text[target_at..target_at + len]) {
        return None;
    }
    Some(route(text, LINK, target_at, len, target_at + len + 1, None))
}

/// `<target>` (`_RE_ANGLE`): it cannot start with white space or `!`, and holds no `<`; the
/// first `>` closes it.
fn angle_route(text: &str) -> Option<CoreRoute> {
    let bytes = text.as_bytes();
    let len = bytes[1..].iter().position(|&b| matches!(b, b'<' | b'>' | b'\n'))?;
    if bytes[1 + len] != b'>' || bytes.get(1).is_some_and(|&b| b == b'!') {
        return None;
    }
    if !plain_spaced_path(&text[1..1 + len]) {
        return None;
    }
    Some(route(text, ANGLE, 1, len, len + 2, None))
}

/// `` `target` `` (`_RE_CODE`, one backtick each side; a longer run is left to Python) and
/// `_code_target`'s verdict that it is a path: one with white space inside names a folder or
/// ends in `.md`, one without holds a `/` or a `.`. White space at the span's edges (which
/// CommonMark may trim) is left to Python.
fn code_route(text: &str) -> Option<CoreRoute> {
    let bytes = text.as_bytes();
    if bytes.get(1) == Some(&b'`') {
        return None;
    }
    let len = bytes[1..].iter().position(|&b| matches!(b, b'`' | b'\n'))?;
    let after = 1 + len;
    if bytes[after] != b'`' || bytes.get(after + 1) == Some(&b'`') {
        return None;
    }
    let written = &text[1..after];
    if !plain_spaced_path(written) {
        return None;
    }
    let path_like = if written.contains(is_py_space) {
        written.contains('/') || ends_in_md(written)
    } else {
        written.contains(['/', '.'])
    };
    if !path_like {
        return None; // `npm test`: no route, which Python says
    }
    Some(route(text, CODE_SPAN, 1, len, after + 1, None))
}

/// (form, path start, path end, the path if it is not the written `text[start:end]`,
/// description) of the route that starts `text` (a list item's content or a table cell,
/// stripped), or None where `parse_route_text` is to read it.
#[pyfunction]
pub fn link_route(text: &Bound<'_, PyString>) -> Option<CoreRoute> {
    let text = text.to_str().ok()?; // a lone surrogate: the Python reading
    let bytes = text.as_bytes();
    match (bytes.first()?, bytes.get(1)) {
        (b'[', Some(b'[')) => wiki_route(text),
        (b'[', _) => inline_link_route(text),
        (b'<', _) => angle_route(text),
        (b'`', _) => code_route(text),
        _ => None,
    }
}
