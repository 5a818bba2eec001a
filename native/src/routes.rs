//! `link_route`: the route most index lines are, `[Title](folder/file.md) — description`, read
//! without the regular expressions of `read_route_text` (pmem_lsp/engine/index_routes.py; group
//! `routes` of native_mirrors.py, docs/native.md).
//!
//! It answers only where the Python reading is certain to be a link route whose path is the
//! target as written: link text without `[`, `]` or `\`, a target of no white space, brackets,
//! parentheses, `%`, `#`, `?` or `:`, and made of plain folder names (no `.`, `..` or empty
//! part, not absolute). Anything else — a wiki link, a code span, emphasis, a title, an
//! escaped or percent-encoded path — is None, and the Python code reads the line. Python's
//! `\s` and `str.strip()` are the same set (`is_py_space`), so the spans and the description
//! are those Python computes, counted in characters as Python's indexes are.

use pyo3::prelude::*;
use pyo3::types::PyString;

use super::{is_py_space, py_strip};

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
/// parts only, nothing `unquote`, `strip_fragment`, the scheme or drive checks or
/// `posixpath.normpath` would change or refuse.
fn plain_path(target: &str) -> bool {
    if target.is_empty() || target.starts_with(['~', '\\', '$']) {
        return false;
    }
    if target.bytes().any(|b| matches!(b, b'%' | b'#' | b'?' | b':')) {
        return false;
    }
    target.split('/').all(|part| !part.is_empty() && part != "." && part != "..")
}

/// (path start, path end, description) of the link route that starts `text` (a list item's
/// content, stripped), or None where `parse_route_text` is to read it. The path is the
/// written target: `text[start:end]`.
#[pyfunction]
pub fn link_route(text: &Bound<'_, PyString>) -> Option<(usize, usize, String)> {
    let text = text.to_str().ok()?; // a lone surrogate: the Python reading
    let bytes = text.as_bytes();
    if bytes.first() != Some(&b'[') || bytes.get(1) == Some(&b'[') {
        return None;
    }
    // The link text runs to the first `]`; `[` and `\` in it are the regular expression's
    // nested and escaped brackets, left to Python.
    let close = 1 + bytes[1..].iter().position(|&b| matches!(b, b']' | b'[' | b'\\'))?;
    if bytes[close] != b']' || bytes.get(close + 1) != Some(&b'(') {
        return None;
    }
    let target_at = close + 2;
    let mut target_len = None;
    for (i, c) in text[target_at..].char_indices() {
        if c == ')' {
            target_len = Some(i);
            break;
        }
        if matches!(c, '(' | '<' | '>') || is_py_space(c) {
            return None; // a nested pair, an angle target, a title: the Python reading
        }
    }
    let target = &text[target_at..target_at + target_len?];
    if !plain_path(target) {
        return None;
    }
    let start = text[..target_at].chars().count();
    let end = start + target.chars().count();
    let rest = &text[target_at + target.len() + 1..];
    Some((start, end, description(rest).to_owned()))
}
