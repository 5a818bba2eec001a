//! `file_record`: one call per memory file (docs/native.md). From the file's text (split into
//! lines here as `split_lines` does, so the Python side makes no line `str` unless a rule asks
//! for them) it returns, in one tuple, what `MemoryFile` builds in Python: the
//! front matter's end, the block scan (the fast path of `scan_fast`), the preamble (title,
//! metadata lines, where the body starts) and the links with their spans, so that the Python
//! side makes no per-line object. Each piece follows its Python twin in
//! pmem_lsp/engine/memory_file.py line for line; where a piece is unsure of a Python detail it
//! answers None and the Python code computes that piece (the preamble of a file whose metadata
//! lines hold characters beyond ASCII and the CJK letters and punctuation `metadata_line` knows), and where the block scan would hand over to the full scanner the whole
//! record is None (the Python path, which is the reference, runs).

use memchr::{memchr, memchr2_iter, memchr_iter};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use super::{is_py_space, py_strip, scan_fast, FenceRow, HeadingRow, ItemRow, CODE, HEADING, HTML, PARAGRAPH};

// -- the front matter ---------------------------------------------------------------------

fn py_rstrip(s: &str) -> &str {
    s.trim_end_matches(is_py_space)
}

/// `_front_matter_end(lines)`.
fn front_matter_end(lines: &[&str]) -> usize {
    if lines.is_empty() || py_rstrip(lines[0]) != "---" {
        return 0;
    }
    for (i, line) in lines.iter().enumerate().skip(1) {
        let r = py_rstrip(line);
        if r == "---" || r == "..." {
            return i + 1;
        }
    }
    0
}

// -- metadata lines ---------------------------------------------------------------------------

/// A character `[^\W\d_]` (a letter of `_KEY`'s first place) and `\w` take, beyond ASCII:
/// hiragana and katakana letters (less `゠` and `・`, which are punctuation), the unified
/// ideographs and their extension A (up to U+9FFC, assigned since Unicode 13, Python 3.10), the
/// Hangul syllables. tests/engine/test_native_differential.py checks every one against `re`.
fn is_cjk_letter(c: char) -> bool {
    matches!(c, '\u{3041}'..='\u{3096}' | '\u{309d}'..='\u{309e}' | '\u{30a1}'..='\u{30fa}' | '\u{30fc}'..='\u{30fe}'
        | '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9ffc}' | '\u{ac00}'..='\u{d7a3}')
}

/// Punctuation of CJK text that neither `\w` nor `\s` takes: the ideographic comma, full stop and
/// brackets, the fullwidth signs (`：` among them), the middle dot, dashes, quotes and the ellipsis
/// (U+2010–U+2027). Checked as `is_cjk_letter` is.
fn is_cjk_punctuation(c: char) -> bool {
    matches!(c, '\u{b7}' | '\u{2010}'..='\u{2027}' | '\u{3001}'..='\u{3003}' | '\u{3008}'..='\u{3011}'
        | '\u{3014}'..='\u{301f}' | '\u{ff01}'..='\u{ff0f}' | '\u{ff1a}'..='\u{ff20}' | '\u{ff3b}'..='\u{ff40}'
        | '\u{ff5b}'..='\u{ff64}')
}

/// Letters of European text that `[^\W\d_]` and `\w` take: Latin-1's and Latin Extended-A and
/// B's (less `×` and `÷`), and Cyrillic's (less `҂` and the combining marks U+0483–U+0489).
/// Checked as `is_cjk_letter` is.
fn is_european_letter(c: char) -> bool {
    matches!(c, '\u{c0}'..='\u{d6}' | '\u{d8}'..='\u{f6}' | '\u{f8}'..='\u{24f}' | '\u{400}'..='\u{481}'
        | '\u{48a}'..='\u{4ff}')
}

/// Signs of European text that neither `\w` nor `\s` takes: `«` `»` `¡` `¿`.
fn is_european_punctuation(c: char) -> bool {
    matches!(c, '\u{ab}' | '\u{bb}' | '\u{a1}' | '\u{bf}')
}

/// A letter beyond ASCII whose Python classes the core knows.
fn is_known_letter(c: char) -> bool {
    is_cjk_letter(c) || is_european_letter(c)
}

/// `[\w .'/()&+-]`, on a character ASCII or one the core knows (`metadata_line`).
fn key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | ' ' | '.' | '\'' | '/' | '(' | ')' | '&' | '+' | '-') || is_known_letter(c)
}

/// `_KEY`'s first character: `[^\W\d_]`.
fn key_start(c: char) -> bool {
    c.is_ascii_alphabetic() || is_known_letter(c)
}

/// The character at `i`, if any: the functions below read a line as bytes where it is ASCII
/// (no copy) and as characters where it is not.
fn at<T: Copy + Into<char>>(b: &[T], i: usize) -> Option<char> {
    b.get(i).map(|&x| x.into())
}

/// Do the characters from `i` on start with `lit`?
fn has_at<T: Copy + Into<char>>(b: &[T], i: usize, lit: &[char]) -> bool {
    lit.iter().enumerate().all(|(k, &c)| at(b, i + k) == Some(c))
}

/// The shortest key (`_KEY`: a letter, then up to 39 key characters) starting at `s` for which
/// `rest(end of key)` holds: the lazy `{0,39}?` of `_KEY`. Returns (key end, rest's value).
fn shortest_key<T: Copy + Into<char>, V>(b: &[T], s: usize, rest: impl Fn(usize) -> Option<V>) -> Option<(usize, V)> {
    if !at(b, s).is_some_and(key_start) {
        return None;
    }
    let mut e = s + 1;
    loop {
        if let Some(v) = rest(e) {
            return Some((e, v));
        }
        if e - s >= 40 || !at(b, e).is_some_and(key_char) {
            return None;
        }
        e += 1;
    }
}

fn skip_tabs<T: Copy + Into<char>>(b: &[T], mut p: usize) -> usize {
    while matches!(at(b, p), Some(' ' | '\t')) {
        p += 1;
    }
    p
}

fn skip_spaces<T: Copy + Into<char>>(b: &[T], mut p: usize) -> usize {
    while at(b, p).is_some_and(is_py_space) {
        p += 1;
    }
    p
}

/// `(?::[ \t]|:$|：)` at `p`: where the value may start.
fn colon<T: Copy + Into<char>>(b: &[T], p: usize) -> Option<usize> {
    match at(b, p)? {
        ':' if matches!(at(b, p + 1), None | Some(' ' | '\t')) => Some(p + 1),
        '：' => Some(p + 1),
        _ => None,
    }
}

/// `_RE_METADATA`'s three alternatives in order, on a line's bytes or characters: where the
/// key starts and ends and where the value starts (it runs to the end), or None.
fn metadata_spans<T: Copy + Into<char>>(b: &[T]) -> Option<(usize, usize, usize)> {
    let mut p = 0;
    while p < 3 && at(b, p) == Some(' ') {
        p += 1;
    }
    // `(?:[-*+][ \t]+)?`: with the marker first; without it nothing can match (see below).
    let start = if matches!(at(b, p), Some('-' | '*' | '+')) && matches!(at(b, p + 1), Some(' ' | '\t')) {
        skip_tabs(b, p + 1)
    } else {
        p
    };
    // Without the marker, the alternatives would start at `-`, `*` or `+` followed by a space or
    // a tab: no letter, and no `**`. So `start` is the only place to look.
    if has_at(b, start, &['*', '*']) {
        let k = start + 2;
        // **Key\s*(?::|：)**[ \t]*value
        let bold_colon = |e: usize| {
            let q = skip_spaces(b, e);
            (has_at(b, q, &[':', '*', '*']) || has_at(b, q, &['：', '*', '*'])).then(|| skip_tabs(b, q + 3))
        };
        if let Some((e, v)) = shortest_key(b, k, bold_colon) {
            return Some((k, e, v));
        }
        // **Key**\s*(?::[ \t]|:$|：)[ \t]*value
        let bold_key = |e: usize| {
            if !has_at(b, e, &['*', '*']) {
                return None;
            }
            colon(b, skip_spaces(b, e + 2)).map(|v| skip_tabs(b, v))
        };
        if let Some((e, v)) = shortest_key(b, k, bold_key) {
            return Some((k, e, v));
        }
    }
    // Key[ \t]*(?::[ \t]|:$|：)[ \t]*value
    shortest_key(b, start, |e| colon(b, skip_tabs(b, e)).map(|v| skip_tabs(b, v))).map(|(e, v)| (start, e, v))
}

/// What `parse_metadata_line` makes of a line: Some(None) for no metadata, Some(Some((key,
/// value))), or None where the line holds a character beyond ASCII other than the letters and
/// signs above and Python's wide spaces (the Python code reads that line).
fn metadata_line(line: &str) -> Option<Option<(String, String)>> {
    if line.is_ascii() {
        let found = metadata_spans(line.as_bytes());
        return Some(found.map(|(k, e, v)| (py_strip(&line[k..e]).to_string(), py_strip(&line[v..]).to_string())));
    }
    let b: Vec<char> = line.chars().collect();
    let known = |c: char| {
        c.is_ascii() || is_known_letter(c) || is_cjk_punctuation(c) || is_european_punctuation(c) || super::is_py_space_wide(c)
    };
    if !b.iter().all(|&c| known(c)) {
        return None;
    }
    let text = |from: usize, to: usize| py_strip(&b[from..to].iter().collect::<String>()).to_string();
    Some(metadata_spans(&b[..]).map(|(k, e, v)| (text(k, e), text(v, b.len()))))
}

// -- the preamble -----------------------------------------------------------------------------

type Preamble = (Option<usize>, Vec<(i64, String, String)>, i64);

struct Doc<'a> {
    lines: &'a [&'a str],
    fm_end: usize,
    kinds: &'a [u8],
    tops: &'a [i64],
}

impl Doc<'_> {
    fn kind(&self, i: usize) -> Option<u8> {
        if i < self.fm_end {
            None // "front-matter"
        } else {
            Some(self.kinds[i - self.fm_end])
        }
    }

    /// `_skip_blank_and_comments`.
    fn skip_blank_and_comments(&self, mut i: usize) -> usize {
        let n = self.lines.len();
        while i < n {
            let stripped = py_strip(self.lines[i]);
            if stripped.is_empty() {
                i += 1;
            } else if stripped.starts_with("<!--") && self.kind(i) == Some(HTML) {
                while i < n && !self.lines[i].contains("-->") {
                    i += 1;
                }
                i += 1;
            } else {
                break;
            }
        }
        i.min(n)
    }

    /// `_leads_in`.
    fn leads_in(&self, i: usize) -> bool {
        let nxt = i + 1;
        if nxt >= self.lines.len() {
            return false;
        }
        let top = nxt >= self.fm_end && self.tops[nxt - self.fm_end] >= 0;
        let l = self.lines[nxt].trim_start_matches(is_py_space);
        top || l.starts_with('>') || l.starts_with('|')
    }

    /// `_preamble`: (the title's index in `headings`, the metadata lines, `preamble_end`), or
    /// None where a line that reaches `parse_metadata_line` holds a character `metadata_line` leaves to Python.
    fn preamble(&self, headings: &[HeadingRow]) -> Option<Preamble> {
        let lines = self.lines;
        let n = lines.len();
        // `heads`: top-level headings by line (the last of a line wins, as in the dict).
        let head_at = |i: usize| headings.iter().rposition(|h| h.3 && h.0 == i as i64);
        let mut i = self.skip_blank_and_comments(self.fm_end);
        let mut title = None;
        if let Some(k) = head_at(i) {
            if headings[k].1 == 1 && !headings[k].4 {
                title = Some(k);
                i += 1;
            }
        }
        let mut metadata = Vec::new();
        while i < n {
            let line = lines[i];
            let stripped = py_strip(line);
            let kind = self.kind(i);
            if stripped.is_empty() || (kind == Some(HTML) && stripped.starts_with("<!--")) {
                i = self.skip_blank_and_comments(i);
                continue;
            }
            if head_at(i).is_some() || kind == Some(CODE) {
                break;
            }
            if stripped.starts_with('>') {
                i += 1;
                continue;
            }
            match metadata_line(line)? {
                None => break,
                Some((key, value)) => {
                    if value.is_empty() && self.leads_in(i) {
                        break;
                    }
                    metadata.push((i as i64, key, value));
                }
            }
            i += 1;
        }
        Some((title, metadata, i as i64))
    }
}

// -- links ------------------------------------------------------------------------------------

/// `mask_code_spans`, on characters.
fn mask_code_spans(line: &[char]) -> Vec<char> {
    let mut out = line.to_vec();
    if !line.contains(&'`') {
        return out;
    }
    let n = line.len();
    let mut i = 0;
    while i < n {
        if line[i] != '`' {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < n && line[j] == '`' {
            j += 1;
        }
        let run = j - i;
        let mut k = j;
        let mut closed = None;
        while k < n {
            if line[k] == '`' {
                let mut m = k;
                while m < n && line[m] == '`' {
                    m += 1;
                }
                if m - k == run {
                    closed = Some(m);
                    break;
                }
                k = m;
            } else {
                k += 1;
            }
        }
        match closed {
            None => i = j,
            Some(c) => {
                for o in &mut out[i..c] {
                    *o = ' ';
                }
                i = c;
            }
        }
    }
    out
}

fn skip_space(m: &[char], mut p: usize) -> usize {
    while p < m.len() && is_py_space(m[p]) {
        p += 1;
    }
    p
}

/// `(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)` of `RE_INLINE_LINK` at `p`: the match's end.
fn inline_tail(m: &[char], p: usize) -> Option<usize> {
    let n = m.len();
    let w = skip_space(m, p);
    if w > p && w < n {
        let close = match m[w] {
            '"' => Some('"'),
            '\'' => Some('\''),
            '(' => Some(')'),
            _ => None,
        };
        if let Some(close) = close {
            if let Some(k) = m[w + 1..].iter().position(|&c| c == close) {
                let after = skip_space(m, w + 1 + k + 1);
                if after < n && m[after] == ')' {
                    return Some(after + 1);
                }
            }
        }
    }
    if w < n && m[w] == ')' {
        Some(w + 1)
    } else {
        None
    }
}

/// `RE_INLINE_LINK` at `p` (`m[p]` is an unescaped `[`): (text span, target span, end).
fn inline_at(m: &[char], p: usize) -> Option<((usize, usize), (usize, usize), usize)> {
    let n = m.len();
    // The text: `(?:[^\[\]\\]|\\.|\[(?:[^\[\]\\]|\\.)*\])*` then `\]` (one way to read it).
    let mut i = p + 1;
    loop {
        if i >= n {
            return None;
        }
        match m[i] {
            ']' => break,
            '\\' => {
                if i + 1 < n && m[i + 1] != '\n' {
                    i += 2;
                } else {
                    return None;
                }
            }
            '[' => {
                let mut j = i + 1;
                loop {
                    if j >= n {
                        return None;
                    }
                    match m[j] {
                        ']' => {
                            j += 1;
                            break;
                        }
                        '[' => return None,
                        '\\' => {
                            if j + 1 < n && m[j + 1] != '\n' {
                                j += 2;
                            } else {
                                return None;
                            }
                        }
                        _ => j += 1,
                    }
                }
                i = j;
            }
            _ => i += 1,
        }
    }
    let text = (p + 1, i);
    if i + 1 >= n || m[i + 1] != '(' {
        return None;
    }
    let q = i + 2;
    let q1 = skip_space(m, q);
    // `\s*` took every space: the angle form, else the bare one (its longest reading is the
    // only one a tail can follow: a shorter one is followed by a character of its own).
    if q1 < n && m[q1] == '<' {
        if let Some(k) = m[q1 + 1..].iter().position(|&c| c == '<' || c == '>' || c == '\n') {
            let r = q1 + 1 + k;
            if m[r] == '>' {
                if let Some(end) = inline_tail(m, r + 1) {
                    return Some((text, (q1 + 1, r), end));
                }
            }
        }
    } else {
        let plain = |c: char| !is_py_space(c) && !matches!(c, '(' | ')' | '<' | '>');
        let mut r = q1;
        while r < n && plain(m[r]) {
            r += 1;
        }
        while r < n && m[r] == '(' {
            let mut t = r + 1;
            while t < n && !is_py_space(m[t]) && m[t] != '(' && m[t] != ')' {
                t += 1;
            }
            if t < n && m[t] == ')' {
                r = t + 1;
                while r < n && plain(m[r]) {
                    r += 1;
                }
            } else {
                break;
            }
        }
        if let Some(end) = inline_tail(m, r) {
            return Some((text, (q1, r), end));
        }
    }
    // `\s*` gives back its last space: an empty bare target there, then the tail.
    if q1 > q {
        if let Some(end) = inline_tail(m, q1 - 1) {
            return Some((text, (q1 - 1, q1 - 1), end));
        }
    }
    None
}

fn is_line_end(m: &[char], p: usize) -> bool {
    p == m.len() || (p + 1 == m.len() && m[p] == '\n')
}

/// A quoted part `"(?:[^"\\]|\\.)*"` (or with `'`, or `\((?:[^()\\]|\\.)*\)`) at `p`: its end.
fn quoted(m: &[char], p: usize) -> Option<usize> {
    let n = m.len();
    let (close, stop) = match m.get(p)? {
        '"' => ('"', None),
        '\'' => ('\'', None),
        '(' => (')', Some('(')),
        _ => return None,
    };
    let mut i = p + 1;
    while i < n {
        let c = m[i];
        if c == close {
            return Some(i + 1);
        }
        if Some(c) == stop {
            return None;
        }
        if c == '\\' {
            if i + 1 < n && m[i + 1] != '\n' {
                i += 2;
                continue;
            }
            return None;
        }
        i += 1;
    }
    None
}

/// `_RE_REFDEF.match(m)`: the target's span.
fn refdef(m: &[char]) -> Option<(usize, usize)> {
    let n = m.len();
    let mut p = 0;
    while p < n && p < 3 && m[p] == ' ' {
        p += 1;
    }
    if p >= n || m[p] != '[' || (p + 1 < n && m[p + 1] == '^') {
        return None;
    }
    let mut i = p + 1;
    let mut count = 0;
    loop {
        if i >= n {
            return None;
        }
        match m[i] {
            ']' => break,
            '[' => return None,
            '\\' => {
                if i + 1 < n && m[i + 1] != '\n' {
                    i += 2;
                } else {
                    return None;
                }
            }
            _ => i += 1,
        }
        count += 1;
    }
    if count == 0 || i + 1 >= n || m[i + 1] != ':' {
        return None;
    }
    let tabs = |mut q: usize| {
        while q < n && (m[q] == ' ' || m[q] == '\t') {
            q += 1;
        }
        q
    };
    let q = tabs(i + 2);
    let (span, after) = if q < n && m[q] == '<' {
        let k = m[q + 1..].iter().position(|&c| c == '<' || c == '>' || c == '\n')?;
        let r = q + 1 + k;
        if m[r] != '>' {
            return None;
        }
        ((q + 1, r), r + 1)
    } else {
        if q >= n || is_py_space(m[q]) || m[q] == '<' {
            return None;
        }
        let mut r = q + 1;
        while r < n && !is_py_space(m[r]) {
            r += 1;
        }
        ((q, r), r)
    };
    let w = tabs(after);
    if w > after {
        if let Some(e) = quoted(m, w) {
            if is_line_end(m, tabs(e)) {
                return Some(span);
            }
        }
    }
    if is_line_end(m, w) {
        Some(span)
    } else {
        None
    }
}

type LinkRow = (i64, usize, usize, String, String, bool);

/// `find_links(line, line_no, definition_allowed)`.
fn find_links(line: &str, line_no: i64, definition_allowed: bool, out: &mut Vec<LinkRow>) {
    if memchr(b'[', line.as_bytes()).is_none() {
        return;
    }
    let o: Vec<char> = line.chars().collect();
    let m = mask_code_spans(&o);
    let n = m.len();
    let s = |a: usize, b: usize, from: &[char]| from[a..b].iter().collect::<String>();
    let mut pos = 0;
    while pos < n {
        let at = if m[pos] == '!' && pos + 1 < n && m[pos + 1] == '[' {
            Some(pos + 1)
        } else if m[pos] == '[' && (pos == 0 || m[pos - 1] != '\\') {
            Some(pos)
        } else {
            None
        };
        if let Some(p) = at {
            if let Some((text, target, end)) = inline_at(&m, p) {
                out.push((line_no, target.0, target.1, s(target.0, target.1, &o), s(text.0, text.1, &m), false));
                pos = end;
                continue;
            }
        }
        pos += 1;
    }
    if definition_allowed && m.windows(2).any(|w| w[0] == ']' && w[1] == ':') {
        if let Some((a, b)) = refdef(&m) {
            out.push((line_no, a, b, s(a, b, &o), String::new(), true));
        }
    }
}

/// Does `s` hold `a` followed by `b`, and `a` followed by `c`? (`"](" in line`: the
/// substring search of `str::contains` costs more to set up than a short line takes to scan.)
fn pairs_after(s: &str, a: u8, b: u8, c: u8) -> (bool, bool) {
    let s = s.as_bytes();
    let (mut with_b, mut with_c) = (false, false);
    let mut i = 0;
    while let Some(k) = memchr(a, &s[i..]) {
        let j = i + k + 1;
        match s.get(j) {
            Some(&x) if x == b => with_b = true,
            Some(&x) if x == c => with_c = true,
            _ => {}
        }
        if with_b && with_c {
            break;
        }
        i = j;
    }
    (with_b, with_c)
}

/// `MemoryFile.links`.
fn links(d: &Doc<'_>) -> Vec<LinkRow> {
    let mut out = Vec::new();
    let start = d.fm_end;
    let lines = d.lines;
    let mut last_definition: i64 = -2;
    for n in start..lines.len() {
        let line = lines[n];
        let (inline, definition) = pairs_after(line, b']', b'(', b':');
        if !inline && !definition {
            continue;
        }
        let kind = d.kinds[n - start];
        if kind != PARAGRAPH || py_strip(line).is_empty() {
            if kind == HEADING && inline {
                find_links(line, n as i64, false, &mut out);
            }
            continue;
        }
        let allowed = n == start
            || d.kinds[n - 1 - start] != PARAGRAPH
            || py_strip(lines[n - 1]).is_empty()
            || last_definition == n as i64 - 1;
        let before = out.len();
        find_links(line, n as i64, allowed, &mut out);
        if out[before..].iter().any(|l| l.5) {
            last_definition = n as i64;
        }
    }
    out
}

// -- the Summary section ------------------------------------------------------------------------

type Section = (i64, Vec<(i64, i64, String)>, Vec<(i64, i64)>);

/// `MemoryFile.summary`: `section_of` the first of `summary_headings` (top-level, ATX, level
/// 2, `Summary` or `摘要`) as (end, bullets (line, start, text), other runs), or None.
fn summary(d: &Doc<'_>, headings: &[HeadingRow], items: &[ItemRow]) -> Option<Section> {
    let h = headings.iter().find(|h| h.3 && !h.4 && h.1 == 2 && (h.2 == "Summary" || h.2 == "摘要"))?;
    let n = d.lines.len() as i64;
    // `section_end`
    let end = headings.iter().find(|x| x.3 && x.0 > h.5).map_or(n, |x| x.0);
    let mut bullets = Vec::new();
    let mut runs: Vec<(i64, i64)> = Vec::new();
    for j in (h.5 + 1)..end {
        let line = d.lines[j as usize];
        if py_strip(line).is_empty() {
            continue;
        }
        let top = if (j as usize) < d.fm_end { -1 } else { d.tops[j as usize - d.fm_end] };
        if top >= 0 && !items[top as usize].3 {
            let item = &items[top as usize];
            if item.0 == j {
                let col = item.5 as usize;
                let text: &str = match line.char_indices().nth(col) {
                    Some((b, _)) => &line[b..],
                    None => "",
                };
                let lead = text.chars().take_while(|&c| is_py_space(c)).count();
                bullets.push((j, item.5 + lead as i64, py_strip(text).to_string()));
            }
            continue;
        }
        match runs.last_mut() {
            Some(last) if last.1 == j - 1 => last.1 = j,
            _ => runs.push((j, j)),
        }
    }
    Some((end, bullets, runs))
}

/// `is_placeholder(text)` of rules/summary.py for an ASCII bullet text (`_PLACEHOLDERS`,
/// `_RE_ANGLE_PLACEHOLDER`, `_RE_PLACEHOLDER_PREFIX`).
fn is_placeholder_ascii(text: &str) -> bool {
    let t = py_strip(py_strip(text).trim_matches(['*', '_', '`']));
    let lower = t.to_ascii_lowercase();
    if t.is_empty() || ["todo", "tbd", "tba", "...", "xxx", "n/a", "fixme", "?", "-"].contains(&lower.as_str()) {
        return true;
    }
    let b = t.as_bytes();
    if b[0] == b'<' && b.len() >= 2 && b[b.len() - 1] == b'>' && !b[1..b.len() - 1].iter().any(|&c| c == b'<' || c == b'>') {
        return true;
    }
    // `^(?:todo|tbd|fixme)\b\s*[:：-]`, case folded
    ["todo", "tbd", "fixme"].iter().any(|w| {
        if !lower.starts_with(w) {
            return false;
        }
        let rest = &b[w.len()..];
        if rest.first().map_or(false, |&c| c.is_ascii_alphanumeric() || c == b'_') {
            return false; // no `\b`
        }
        let k = rest.iter().take_while(|&&c| super::is_py_space_ascii(c)).count();
        matches!(rest.get(k), Some(b':') | Some(b'-'))
    })
}

/// Would `check_summary` find nothing in an active file? True only where it surely would not:
/// one summary heading, right after the preamble, 3 to 6 bullets, nothing else in the section,
/// and no bullet a placeholder (each ASCII). False says nothing.
fn summary_clean(headings: &[HeadingRow], section: &Option<Section>, preamble: &Option<Preamble>) -> bool {
    let (Some((_, bullets, runs)), Some((_, _, preamble_end))) = (section, preamble) else {
        return false;
    };
    let mut heads = headings.iter().filter(|h| h.3 && !h.4 && h.1 == 2 && (h.2 == "Summary" || h.2 == "摘要"));
    let first = heads.next().map(|h| h.0);
    first == Some(*preamble_end)
        && heads.next().is_none()
        && (3..=6).contains(&bullets.len())
        && runs.is_empty()
        && bullets.iter().all(|b| b.2.is_ascii() && !is_placeholder_ascii(&b.2))
}

/// Can no bullet of the summary say the work is finished (rules/concluded.py's
/// `_concluded_bullet`)? True only where none surely can: each bullet is ASCII, holds no colon
/// (a `Status: done` line) and none of the words `_EN_BULLET` needs (`done`, `complete`,
/// `finished`, `shipped`, `closed`, `concluded`, `wrapped`, `delivered`, in any case; the
/// Chinese forms are not ASCII). False says nothing.
fn bullets_unconcluded(section: &Option<Section>) -> bool {
    const WORDS: [&str; 8] = ["done", "complete", "finished", "shipped", "closed", "concluded", "wrapped", "delivered"];
    let Some((_, bullets, _)) = section else {
        return false;
    };
    bullets.iter().all(|b| {
        let lower = b.2.to_ascii_lowercase();
        b.2.is_ascii() && !b.2.contains(':') && !WORDS.iter().any(|w| lower.contains(w))
    })
}

/// `"~/" in text or text.startswith("/") or _ABSOLUTE_HINT.search(text)` of
/// rules/source_paths.py, on the lines of the text: `/` then an ASCII letter, after a space,
/// `` ` ``, `(`, `:` or `：`, or at the start of a line after the first (a line break is a space).
fn absolute_hint(lines: &[&str]) -> bool {
    if lines.first().map_or(false, |l| l.starts_with('/')) {
        return true;
    }
    lines.iter().enumerate().any(|(i, line)| {
        let b = line.as_bytes();
        let mut j = 0;
        while let Some(k) = memchr(b'/', &b[j..]) {
            let p = j + k;
            if p > 0 && b[p - 1] == b'~' {
                return true; // "~/"
            }
            if b.get(p + 1).map_or(false, |n| n.is_ascii_alphabetic()) {
                let after = match line[..p].chars().next_back() {
                    None => i > 0,
                    Some(c) => is_py_space(c) || matches!(c, '`' | '(' | ':' | '：'),
                };
                if after {
                    return true;
                }
            }
            j = p + 1;
        }
        false
    })
}

// -- dates ----------------------------------------------------------------------------------------

type DateRow = (&'static str, i64, String);

/// `key[ \t]*:` at the start of `s` for one of `keys`: (the key, the value after the colon).
fn date_key<'a>(s: &'a str, keys: &[&'static str]) -> Option<(&'static str, &'a str)> {
    let key = keys.iter().find(|k| s.starts_with(*k))?;
    let rest = s[key.len()..].trim_start_matches([' ', '\t']);
    rest.strip_prefix(':').map(|v| (*key, v))
}

/// The matches behind `MemoryFile.date_fields`, as (key, line, value as matched): the front
/// matter's `_RE_FRONT_DATE` lines, then the legacy `_RE_LEGACY_DATE` lines outside code.
fn dates(d: &Doc<'_>) -> Vec<DateRow> {
    let mut out = Vec::new();
    let lines = d.lines;
    for (i, line) in lines.iter().enumerate().take(d.fm_end.saturating_sub(1).max(1)).skip(1) {
        if let Some((key, value)) = date_key(line, &["created", "updated", "verified"]) {
            out.push((key, i as i64, value.to_string()));
        }
    }
    for (i, line) in lines.iter().enumerate().skip(d.fm_end) {
        // `">" not in line[:4]`: the first four characters (a `>` is ASCII: bytes will do,
        // as long as no earlier character is wider; then the `>` is beyond four characters).
        if !line.chars().take(4).any(|c| c == '>') || d.kinds[i - d.fm_end] == CODE {
            continue;
        }
        let b = line.as_bytes();
        let mut p = 0;
        while p < b.len() && p < 3 && b[p] == b' ' {
            p += 1;
        }
        if p >= b.len() || b[p] != b'>' {
            continue;
        }
        let rest = line[p + 1..].trim_start_matches([' ', '\t']);
        if let Some((key, value)) = date_key(rest, &["last_verified", "source_date"]) {
            out.push((key, i as i64, value.to_string()));
        }
    }
    out
}

// -- the near-duplicate sketch ---------------------------------------------------------------

/// The sketch's line length and size this record computes its hashes for (rules/duplicates.py's
/// `MIN_LINE` and `SKETCH`; that module uses the record's hashes only while they are the same).
pub const SKETCH_MIN_LINE: usize = 20;
pub const SKETCH_COUNT: usize = 8;

/// `sketch_hashes` of the text these lines make, where `_build_sketch` takes its bytes path
/// (the text is ASCII and holds none of `_ODD_ASCII_SPACE`), and `sketch_hashes_wide` where it
/// takes its `str` path with a text of `is_wide_sketch_char` characters holding none of
/// `_ODD_ASCII_SPACE` (no line of it breaks or strips otherwise: those characters are no `str`
/// line break and no space); None elsewhere. The lines are those `bytes.splitlines` (and
/// `str.splitlines`) give for such a text.
fn sketch(lines: &[&str]) -> Option<Vec<u32>> {
    // One of _ODD_ASCII_SPACE (\x0b \x0c \x1c-\x1f), or a byte beyond ASCII: one branchless pass.
    let odd = |b: u8| (b == 0x0b) | (b == 0x0c) | (b & 0xfc == 0x1c);
    let mut wide = false;
    for l in lines {
        let (bad, high) = l.as_bytes().iter().fold((false, false), |(o, h), &b| (o | odd(b), h | (b >= 0x80)));
        if bad || (high && !l.chars().all(super::is_wide_sketch_char)) {
            return None;
        }
        wide |= high;
    }
    let mut hashes: Vec<u32> = Vec::new();
    let mut lowered: Vec<u8> = Vec::with_capacity(256);
    for line in lines {
        // `bytes.strip()`/`str.strip()`: of their characters only the space and the tab can be in such a line.
        let l = line.trim_matches([' ', '\t']);
        // Python measures the `str` path's lines in characters.
        let long = if wide { l.len() >= SKETCH_MIN_LINE && l.chars().count() >= SKETCH_MIN_LINE } else { l.len() >= SKETCH_MIN_LINE };
        if long {
            lowered.clear();
            lowered.extend(l.bytes().map(|b| b.to_ascii_lowercase()));
            hashes.push(crc32fast::hash(&lowered));
        }
    }
    hashes.sort_unstable();
    hashes.dedup();
    hashes.truncate(SKETCH_COUNT);
    Some(hashes)
}

// -- link targets ----------------------------------------------------------------------------

/// `posixpath.normpath`.
fn normpath(path: &str) -> String {
    let initial = if path.starts_with("//") && !path.starts_with("///") {
        2
    } else if path.starts_with('/') {
        1
    } else {
        0
    };
    let mut comps: Vec<&str> = Vec::new();
    for comp in path.split('/') {
        if comp.is_empty() || comp == "." {
            continue;
        }
        if comp != ".." || (initial == 0 && comps.is_empty()) || comps.last() == Some(&"..") {
            comps.push(comp);
        } else if !comps.is_empty() {
            comps.pop();
        }
    }
    let out = "/".repeat(initial) + &comps.join("/");
    if out.is_empty() {
        ".".to_string()
    } else {
        out
    }
}

/// `normalize_target(target, base)` of pmem_lsp/engine/paths.py as `_link_paths` reads it:
/// Some(path) for a root-relative path, None for none (a URL, an absolute path, outside the
/// root, empty); Err where it cannot tell (a `%` escape: Python's `unquote` decides).
fn normalize_target(target: &str, base: &str) -> Result<Option<String>, ()> {
    let raw = py_strip(target);
    if raw.is_empty() {
        return Ok(None);
    }
    let b = raw.as_bytes();
    // `_SCHEME`: `^[A-Za-z][A-Za-z0-9+.-]+:`
    let k = b.iter().skip(1).take_while(|c| c.is_ascii_alphanumeric() || matches!(**c, b'+' | b'.' | b'-')).count();
    if b[0].is_ascii_alphabetic() && k >= 1 && b.get(1 + k) == Some(&b':') {
        return Ok(None);
    }
    // `strip_fragment`: cut at the first `#`, then at the first `?`
    let mut path = raw;
    for sep in ['#', '?'] {
        if let Some(cut) = path.find(sep) {
            path = &path[..cut];
        }
    }
    if path.contains('%') {
        return Err(());
    }
    if path.is_empty() {
        return Ok(None);
    }
    let p = path.as_bytes();
    if matches!(p[0], b'/' | b'~' | b'\\' | b'$') || (p.len() >= 2 && p[0].is_ascii_alphabetic() && p[1] == b':') {
        return Ok(None);
    }
    let joined = if base.is_empty() {
        path.to_string()
    } else if base.ends_with('/') {
        format!("{base}{path}")
    } else {
        format!("{base}/{path}")
    };
    let norm = normpath(&joined);
    if norm == ".." || norm.starts_with("../") {
        return Ok(None);
    }
    Ok(Some(if norm == "." { String::new() } else { norm }))
}

/// What `_link_paths` of rules/links.py makes of a record's links (rows: (line, start, end,
/// target, text, definition)): the index of each link that names a root path, and that path,
/// or None where Python must decide (a `%` escape, a lone surrogate). A wiki link's text, a URL,
/// an absolute path, a path outside the root and an empty target name none and are left out.
/// Two lists, not a pair per link: most files' links all name a path, and PM402 and the link
/// graph read the paths alone (a link's row becomes a `Link` only for a finding).
#[pyfunction]
pub fn link_targets(rows: &Bound<'_, PyList>, base: &str) -> PyResult<(Vec<usize>, Vec<Option<String>>)> {
    let mut at = Vec::with_capacity(rows.len());
    let mut paths = Vec::with_capacity(rows.len());
    for (index, row) in rows.iter().enumerate() {
        let row = row.cast_into::<PyTuple>()?;
        let (target, text) = (row.get_item(3)?.cast_into::<PyString>()?, row.get_item(4)?.cast_into::<PyString>()?);
        let (target, text) = match (target.to_str(), text.to_str()) {
            (Ok(target), Ok(text)) => (target, text),
            _ => {
                at.push(index);
                paths.push(None);
                continue;
            }
        };
        if text.starts_with('[') && text.ends_with(']') {
            continue; // `is_wikilink_text`
        }
        match normalize_target(target, base) {
            Ok(Some(path)) => {
                at.push(index);
                paths.push(Some(path));
            }
            Ok(None) => {}
            Err(()) => {
                at.push(index);
                paths.push(None);
            }
        }
    }
    Ok((at, paths))
}

// -- the record -------------------------------------------------------------------------------

/// A record's list items and the top item of each line, kept on the Rust side until the Python
/// side asks (`RowScan` in memory_file.py): most checks of most files never do.
#[pyclass]
pub struct Rows {
    items: Vec<ItemRow>,
    tops: Vec<i64>,
}

#[pymethods]
impl Rows {
    /// The list items as `fast_part` gives them: (line, end, top_level, ordered, marker, content_col).
    fn items(&self) -> Vec<ItemRow> {
        self.items.clone()
    }

    /// The index into the items of the top-level item each line is in, or -1.
    fn tops<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, &self.tops)
    }
}

/// One memory file's record (see the module's comment): None where the block scan would hand
/// over to the full scanner, else (front_matter_end, headings, fences, items, line kinds, top
/// item of each line, preamble or None, links or None (a text holding `$` and `](`: Python
/// masks its math), summary or None, dates). The rows are those of
/// `fast_part` (the items and the tops as one `Rows` object, given when asked); the preamble is (index of the title in the headings or None, [(line, key,
/// value)], preamble_end); a link is (line, start, end, target, text, definition); the summary
/// (end, [(line, start, text)], [(first, last)]); a date (key, line, value as matched); and
/// four verdicts: `check_summary` surely finds nothing in the file as an active one
/// (`summary_clean`), no summary bullet can say the work is finished (`bullets_unconcluded`),
/// the text may hold an absolute path (`absolute_hint`), PM401 finds nothing in the text
/// (`secrets::clear`); and as one triple (PyO3 turns tuples of at most 12 into Python ones), the near-duplicate sketch's hashes (`sketch`) or None, the lines PM404 must look at, as `instruction_lines` gives them (used while the text holds no
/// disguised letter), and PM401's doors as `secret_doors_lines` gives them.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn file_record<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    kinds: &Bound<'py, PyTuple>,
) -> PyResult<
    Option<(
        usize,
        Vec<HeadingRow>,
        Vec<FenceRow>,
        Py<Rows>,
        Bound<'py, PyList>,
        Py<Rows>,
        Option<Preamble>,
        Option<Vec<LinkRow>>,
        Option<Section>,
        Vec<DateRow>,
        (bool, bool, bool, bool),
        (Option<Vec<u32>>, Vec<usize>, (u8, Option<Vec<u32>>)),
    )>,
> {
    let strs = match text.to_str() {
        Ok(text) => split_lines(text),
        Err(_) => return Ok(None), // a lone surrogate: Python's path
    };
    let fm_end = front_matter_end(&strs);
    let (found, stop) = scan_fast(&strs[fm_end..], fm_end as i64, false);
    if stop.is_some() {
        return Ok(None);
    }
    let mut tops = vec![-1i64; found.kinds.len()];
    for (index, it) in found.items.iter().enumerate() {
        let a = (it.0 - fm_end as i64) as usize;
        let b = ((it.1 - fm_end as i64) as usize).min(tops.len());
        for t in &mut tops[a..b] {
            *t = index as i64;
        }
    }
    let d = Doc { lines: &strs, fm_end, kinds: &found.kinds, tops: &tops };
    let preamble = d.preamble(&found.headings);
    // A `$` may open TeX math, which holds no link (`$a^{[L](i)}$`): Python's `links` masks
    // the math of such a text (`mask_math`), so its links are handed over (None). Only an
    // inline link (`](`) is read in the masked text: without one, masking changes nothing (an
    // agent-rule file's `$GITHUB_TOKEN` keeps its rows).
    let masked = strs.iter().any(|l| l.contains('$')) && strs.iter().any(|l| l.contains("]("));
    let link_rows = if masked { None } else { Some(links(&d)) };
    let section = summary(&d, &found.headings, &found.items);
    let date_rows = dates(&d);
    // The PM401 doors in full (not the verdict's first door only): `check_secrets` reads them
    // here instead of asking again (`secret_doors_lines`) where the verdict is no.
    let (doors, plain) = super::secrets::doors_lines(&strs);
    let verdicts = (summary_clean(&found.headings, &section, &preamble), bullets_unconcluded(&section), absolute_hint(&strs),
                    super::secrets::clear_by(doors));
    let objs: Vec<Bound<'py, PyAny>> = (0..6).map(|i| kinds.get_item(i)).collect::<PyResult<_>>()?;
    let kind_list = PyList::new(py, found.kinds.iter().map(|&k| &objs[k as usize]))?;
    let hashes = sketch(&strs);
    let rows = Py::new(py, Rows { items: found.items, tops })?;
    let (items, tops) = (rows.clone_ref(py), rows);
    let candidates = super::instruction_candidates(&strs);
    Ok(Some((fm_end, found.headings, found.fences, items, kind_list, tops, preamble, link_rows, section, date_rows, verdicts,
             (hashes, candidates, (doors, plain)))))
}

/// `split_lines` of line_index.py: the lines without their endings (`\r\n`, `\r` or `\n`),
/// no empty last line after a final break.
fn split_lines(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out: Vec<&str> = Vec::with_capacity(b.len() / 32 + 1);
    let mut start = 0;
    if memchr(b'\r', b).is_some() {
        for i in memchr2_iter(b'\n', b'\r', b) {
            if i < start {
                continue; // the `\n` of a `\r\n`
            }
            out.push(&text[start..i]);
            start = if b[i] == b'\r' && b.get(i + 1) == Some(&b'\n') { i + 2 } else { i + 1 };
        }
    } else {
        for i in memchr_iter(b'\n', b) {
            out.push(&text[start..i]);
            start = i + 1;
        }
    }
    out.push(&text[start..]);
    if out.last() == Some(&"") {
        out.pop();
    }
    out
}
