//! pmem's optional native per-file core (docs/native.md). The pure-Python engine is the
//! reference: every function here answers a question the Python code also answers, and
//! tests/engine/test_native_differential.py holds the two to the same results.
//!
//! What is here so far:
//!
//! - `instruction_lines`: which lines of a file PM404 (pmem_lsp/engine/rules/instructions.py)
//!   must look at. A line can only match one of PM404's patterns if it holds one of their
//!   anchor words; the Python rule runs its regular expressions on those lines only. The
//!   answer is a superset: a line named here may still match nothing, a line not named
//!   never matches.

use pyo3::prelude::*;
use pyo3::types::{PyFrozenSet, PyList, PyString, PyTuple};

mod record;
mod routes;
mod secrets;

/// Characters Python's `str.isspace()` (and so `\s` in a `str` pattern) accepts, other than
/// the ASCII ones.
fn is_py_space_wide(c: char) -> bool {
    matches!(c,
        '\u{85}' | '\u{a0}' | '\u{1680}' | '\u{2000}'..='\u{200a}' | '\u{2028}' | '\u{2029}'
        | '\u{202f}' | '\u{205f}' | '\u{3000}')
}

fn is_py_space_ascii(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0x1c..=0x1f | b' ')
}

/// Non-ASCII characters that Python's `(?i)` matches against an ASCII letter (İ ı ſ K).
fn folds_to_ascii(c: char) -> bool {
    matches!(c, '\u{130}' | '\u{131}' | '\u{17f}' | '\u{212a}')
}

/// `line` with ASCII letters lowered and every run of whitespace one space; None where a
/// character could match an ASCII letter case-insensitively (then the line is a candidate).
fn normalise(line: &str, buf: &mut Vec<u8>) -> bool {
    buf.clear();
    let mut last_space = false;
    if line.is_ascii() {
        for &b in line.as_bytes() {
            if is_py_space_ascii(b) {
                if !last_space {
                    buf.push(b' ');
                }
                last_space = true;
            } else {
                buf.push(b.to_ascii_lowercase());
                last_space = false;
            }
        }
        return true;
    }
    let mut utf8 = [0u8; 4];
    for c in line.chars() {
        if c.is_ascii() {
            let b = c as u8;
            if is_py_space_ascii(b) {
                if !last_space {
                    buf.push(b' ');
                }
                last_space = true;
            } else {
                buf.push(b.to_ascii_lowercase());
                last_space = false;
            }
        } else if is_py_space_wide(c) {
            if !last_space {
                buf.push(b' ');
            }
            last_space = true;
        } else if folds_to_ascii(c) {
            return false;
        } else {
            buf.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
            last_space = false;
        }
    }
    true
}

/// Does the normalised line hold one of PM404's anchors? Every alternative of every pattern
/// holds one of these as a literal (whitespace runs as one space):
/// ignore|disregard|forget|override|bypass; system prompt|system instruction|system message|
/// system override|im_start; you are now|you must now|your new|reading this|note to|from now;
/// 忽略|你现在是|不要告诉用户; or both one of do not|don't|never|without|keep and `user` (every
/// alternative of the three patterns for hiding things from the user holds both).
fn has_anchor(s: &[u8]) -> bool {
    let n = s.len();
    // The second byte first: most positions fail there, before a comparison of the whole word.
    let at = |i: usize, lit: &[u8]| -> bool { n - i >= lit.len() && s[i + 1] == lit[1] && &s[i..i + lit.len()] == lit };
    let (mut hide, mut user) = (false, false);
    for (i, &first) in s.iter().enumerate() {
        let hit = match first {
            b'i' => at(i, b"ignore") || at(i, b"im_start"),
            b'd' => {
                hide |= at(i, b"do not") || at(i, b"don't");
                at(i, b"disregard")
            }
            b'f' => at(i, b"forget") || at(i, b"from now"),
            b'o' => at(i, b"override"),
            b'b' => at(i, b"bypass"),
            b's' => {
                at(i, b"system prompt") || at(i, b"system instruction") || at(i, b"system message")
                    || at(i, b"system override")
            }
            b'y' => at(i, b"you are now") || at(i, b"you must now") || at(i, b"your new"),
            b'r' => at(i, b"reading this"),
            b'n' => {
                hide |= at(i, b"never");
                at(i, b"note to")
            }
            b'w' => {
                hide |= at(i, b"without");
                false
            }
            b'k' => {
                hide |= at(i, b"keep");
                false
            }
            b'u' => {
                user |= at(i, b"user");
                false
            }
            0xe5 => at(i, "忽略".as_bytes()),
            0xe4 => at(i, "你现在是".as_bytes()) || at(i, "不要告诉用户".as_bytes()),
            _ => false,
        };
        if hit || (hide && user) {
            return true;
        }
    }
    false
}

/// PM404's patterns (`_PATTERNS` in pmem_lsp/engine/rules/instructions.py, their sources joined
/// by newlines) as `has_anchor` was written for them. The Python side uses `instruction_lines`
/// only while its patterns are exactly these, and a test fails when they differ: a pattern
/// changed there needs its anchors checked here.
const PM404_PATTERNS: &str = r#"(?i)(?<!\bto )(?<!\bnot )\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*(?:previous|prior|above|earlier|preceding|former|original|existing|system|safety|developer)\s+(?:instructions?|prompts?|rules|directions|directives|guidelines|messages?|context)\b
(?i)\b(?:new|updated|real|actual|hidden|secret)\s+system\s+(?:prompt|instructions?|message)\b|<\|im_start\|>\s*system|^\s*(?:#+\s*)?(?:system\s+prompt|system\s+override)\s*:
(?i)\b(?:you\s+are\s+now\s+(?:(?:a|an|no\s+longer|free|unrestricted|dan|jailbroken)\b|(?-i:[A-Z][\w-]*[A-Z][\w-]*)(?=\s*[,.!:;]|\s*$)|(?-i:[A-Z][\w-]*),\s+(?:a|an|the|your)\s+(?:[\w-]+\s+){0,3}?(?:ai|assistant|model|bot|chatbot|agent|llm|persona|character)\b)|from\s+now\s+on\b\s*,?\s*you\s+(?:are|will\s+(?:be|act|pretend|behave|respond\s+as)|are\s+going\s+to\s+(?:be|act|pretend))\b|you\s+must\s+now\b|your\s+new\s+(?:instructions|task|role|goal|objective|rules)\s+(?:is|are)\b|(?:ai|assistant|agent|model|llm)s?\s+reading\s+this\s+(?:must|should|will)\b|note\s+to\s+(?:the\s+)?(?:ai|assistant|agent|llm)\s*:)
(?i)\b(?:do\s+not|don't|never)\s+(?:(?:tell|inform|show|notify)\s+(?:the\s+)?user\s+(?:about|of|that|this|these|those|anything\s+about)\b|(?:reveal|disclose|divulge)\s+(?:[\w'-]+\s+){0,4}?to\s+(?:the\s+)?user\b|(?:mention|show|say)\s+(?:(?:any|all)\s+of\s+)?(?:this|that|it|these|those|them|anything)(?:\s+[\w-]+){0,2}?\s+to\s+(?:the\s+)?user\b)
(?i)\bwithout\s+(?:(?:telling|informing)\s+the\s+user\b|letting\s+the\s+user\s+know\b)
(?i)\bkeep\s+(?:(?:any|all)\s+of\s+)?(?:this|that|it|these|those|them)(?:\s+[\w-]+){0,3}?\s+(?:a\s+)?(?:secret|hidden)\s+from\s+(?:the\s+)?user\b
忽略(?:之前|以上|前面|先前|所有)(?:的)?(?:所有)?(?:指令|指示|提示|规则)
你现在是(?:一个)?(?!用户)
不要告诉用户"#;

/// The anchors of `has_anchor` that are ASCII: each of `ASCII_ANCHORS` alone, or one of
/// `HIDE_ANCHORS` with `USER` on the same line.
const ASCII_ANCHORS: [&[u8]; 16] = [
    b"ignore", b"disregard", b"forget", b"override", b"bypass", b"system prompt", b"system instruction",
    b"system message", b"system override", b"im_start", b"you are now", b"you must now", b"your new",
    b"reading this", b"note to", b"from now",
];
const HIDE_ANCHORS: [&[u8]; 5] = [b"do not", b"don't", b"never", b"without", b"keep"];
const USER: &[u8] = b"user";

/// For each byte, the second letters (bit `letter - 'a'`) an anchor (of the three sets)
/// starting with it takes, in either case.
const BIGRAMS: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut k = 0;
    while k < ASCII_ANCHORS.len() + HIDE_ANCHORS.len() + 1 {
        let lit = if k < ASCII_ANCHORS.len() {
            ASCII_ANCHORS[k]
        } else if k < ASCII_ANCHORS.len() + HIDE_ANCHORS.len() {
            HIDE_ANCHORS[k - ASCII_ANCHORS.len()]
        } else {
            USER
        };
        let (a, b) = (lit[0], lit[1]);
        table[a as usize] |= 1 << (b - b'a');
        table[(a - 32) as usize] |= 1 << (b - b'a'); // upper case
        k += 1;
    }
    table
};

/// For each byte, its letter's bit (`1 << (letter - 'a')`, either case), 0 for any other byte.
const LETTER_BITS: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut b = 0;
    while b < 256 {
        let l = (b as u8) | 0x20; // lowers an ASCII letter and turns no other byte into one
        if l.is_ascii_lowercase() {
            table[b] = 1 << (l - b'a');
        }
        b += 1;
    }
    table
};

/// Can an anchor start with these two bytes? One lookup each, no branch.
fn anchor_bigram(a: u8, b: u8) -> bool {
    BIGRAMS[a as usize] & LETTER_BITS[b as usize] != 0
}

/// Does `lit` (lower case, a space standing for a run of whitespace) start at `s[j..]`?
fn ascii_match_at(s: &[u8], mut j: usize, lit: &[u8]) -> bool {
    for &l in lit {
        if l == b' ' {
            if j >= s.len() || !is_py_space_ascii(s[j]) {
                return false;
            }
            while j < s.len() && is_py_space_ascii(s[j]) {
                j += 1;
            }
        } else {
            if j >= s.len() {
                return false;
            }
            let c = if l.is_ascii_lowercase() { s[j] | 0x20 } else { s[j] };
            if c != l {
                return false;
            }
            j += 1;
        }
    }
    true
}

/// `has_anchor` of the normalised line, for an ASCII line, without normalising it, and only
/// where a word starts: in every alternative of every pattern an ASCII anchor comes after `\b`,
/// `\s`, `>`, `#` or the line's start, so a match always holds one that starts a word (on an
/// ASCII line Python's `\w` is `[A-Za-z0-9_]`). A subset of `has_anchor`'s lines and still a
/// superset of the patterns' (tests/engine/test_native_differential.py); it skips the anchors'
/// bigrams inside words (`re`, `no`, `ne`, `do`, ...), which are most of them in prose.
fn ascii_has_anchor(s: &[u8]) -> bool {
    let (mut hide, mut user) = (false, false);
    for (i, w) in s.windows(2).enumerate() {
        if !anchor_bigram(w[0], w[1]) || (i > 0 && (s[i - 1].is_ascii_alphanumeric() || s[i - 1] == b'_')) {
            continue;
        }
        let first = w[0] | 0x20;
        if ASCII_ANCHORS.iter().any(|lit| lit[0] == first && ascii_match_at(s, i, lit)) {
            return true;
        }
        hide = hide || HIDE_ANCHORS.iter().any(|lit| lit[0] == first && ascii_match_at(s, i, lit));
        user = user || (first == b'u' && ascii_match_at(s, i, USER));
        if hide && user {
            return true;
        }
    }
    false
}

/// Whether PM404 must look at `line` (see the module's comment).
fn instruction_candidate(line: &str, buf: &mut Vec<u8>) -> bool {
    if line.is_ascii() {
        ascii_has_anchor(line.as_bytes())
    } else {
        !normalise(line, buf) || has_anchor(buf)
    }
}

/// The indices of `lines` PM404 must look at: the record's own (`record::file_record`).
pub(crate) fn instruction_candidates(lines: &[&str]) -> Vec<usize> {
    let mut buf = Vec::with_capacity(256);
    (0..lines.len()).filter(|&i| instruction_candidate(lines[i], &mut buf)).collect()
}

/// The indices of the lines PM404 must look at (see the module's comment).
#[pyfunction]
fn instruction_lines(lines: &Bound<'_, PyList>) -> PyResult<Vec<usize>> {
    let mut out = Vec::new();
    let mut buf = Vec::with_capacity(256);
    for (i, item) in lines.iter().enumerate() {
        let s = item.cast_into::<PyString>()?;
        match s.to_str() {
            Ok(line) => {
                if instruction_candidate(line, &mut buf) {
                    out.push(i);
                }
            }
            // A lone surrogate (an undecodable byte kept by the reader): Python decides.
            Err(_) => out.push(i),
        }
    }
    Ok(out)
}

// -- PM208: which route descriptions may state a volatile fact --------------------------------

/// PM208's patterns (`VOLATILE` in pmem_lsp/engine/rules/route_facts.py, their sources joined by
/// newlines) as `volatile_candidates` was written for them; the Python side uses it only while
/// its patterns are exactly these.
const PM208_PATTERNS: &str = r#"(?<![\w.])\d{4}-\d{2}-\d{2}(?![\w.])|(?<!\w)\d{1,2}/\d{1,2}/\d{2,4}(?!\w)
(?i)\bdue\s+(?:by|on|date|in|(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*|today|tomorrow|tonight|next|this|end of|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*)\b|\bdue\s+(?=\d)|\bdeadlines?\s*(?::|is\b|was\b|on\b|by\b|moved\b)(?=\s*\S)|\beta\s*:(?=\s*\S)|\beta\s+(?:is\s+)?(?:\d|(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*|today|tomorrow|tonight|next|this|end of|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*)|截止|到期
(?i)\b(?:pr|mr|pull request|merge request|issue|ticket)\s*#?\d+\s*(?:is\s+)?\(?(?:open|opened|merged|closed|in review|under review|approved|pending|draft|wip)\b|\b(?:merged|closed|opened)\s+(?:in|as)\s+#\d+|\bawaiting review\b|\bin review\b
(?i)\bblocked\s+(?:on|by|until|since)\b|\bis\s+blocked\b|\bblockers?\s*:|\bcurrently\s+blocked\b|阻塞|卡住
(?i)(?<![\w.])\d{1,3}(?:\.\d+)?\s?%\s*(?:done|complete|completed|finished|through|there|of the way|migrated|ready|coverage)\b|\b(?:progress|completion|coverage|done)\s*:?\s*\d{1,3}(?:\.\d+)?\s?%|\d{1,3}\s?%\s*完成|完成\s*\d{1,3}\s?%|进度\s*\d{1,3}\s?%"#;

/// The indices of the descriptions PM208's patterns may match: every one that is not ASCII,
/// and every ASCII one holding what every alternative of every pattern holds (an ASCII digit,
/// `%`, or in any case `due`, `deadline`, `eta`, `block`, `in review`, `awaiting review`). The
/// others match none of them.
#[pyfunction]
fn volatile_candidates(descriptions: &Bound<'_, PyList>) -> PyResult<Vec<usize>> {
    const WORDS: [&str; 6] = ["due", "deadline", "eta", "block", "in review", "awaiting review"];
    let mut out = Vec::new();
    for (i, item) in descriptions.iter().enumerate() {
        let s = item.cast_into::<PyString>()?;
        let candidate = match s.to_str() {
            Ok(d) if d.is_ascii() => {
                let lower = d.to_ascii_lowercase();
                d.bytes().any(|b| b.is_ascii_digit() || b == b'%') || WORDS.iter().any(|w| lower.contains(w))
            }
            _ => true, // not ASCII, or a lone surrogate: Python decides
        };
        if candidate {
            out.push(i);
        }
    }
    Ok(out)
}

// -- the near-duplicate sketch ----------------------------------------------------------------

/// The sketch hashes of an ASCII text without the characters `str` and `bytes` split or strip
/// differently (rules/duplicates.py, `_build_sketch`'s first branch): the CRC-32 of every line,
/// lowered and stripped, of at least `min_line` bytes; the `count` smallest, sorted, no repeats.
#[pyfunction]
fn sketch_hashes(text: &str, min_line: usize, count: usize) -> Vec<u32> {
    let mut hashes: Vec<u32> = Vec::new();
    let mut lowered: Vec<u8> = Vec::with_capacity(256);
    let b = text.as_bytes();
    let mut start = 0;
    let n = b.len();
    while start < n {
        // `bytes.splitlines()`: a line ends at \n, \r or \r\n.
        let mut end = start;
        while end < n && b[end] != b'\n' && b[end] != b'\r' {
            end += 1;
        }
        let mut line = &b[start..end];
        // `bytes.strip()`: ASCII space, \t, \n, \r, \x0b, \x0c.
        let space = |c: &u8| matches!(*c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
        while let Some(c) = line.first() {
            if !space(c) {
                break;
            }
            line = &line[1..];
        }
        while let Some(c) = line.last() {
            if !space(c) {
                break;
            }
            line = &line[..line.len() - 1];
        }
        if line.len() >= min_line {
            lowered.clear();
            lowered.extend(line.iter().map(u8::to_ascii_lowercase));
            hashes.push(crc32fast::hash(&lowered));
        }
        start = if end + 1 < n && b[end] == b'\r' && b[end + 1] == b'\n' { end + 2 } else { end + 1 };
    }
    hashes.sort_unstable();
    hashes.dedup();
    hashes.truncate(count);
    hashes
}

/// The sketch hashes of a text of ASCII, `is_shingle_break` characters other than U+00A0 (the
/// one of them `str.strip` strips) and `is_caseless_cjk` ones, as `_build_sketch`'s `str` path computes them: `str.lower`
/// (ASCII lowering here: none of those characters has a case), `str.splitlines` (\n, \r, \r\n,
/// \x0b, \x0c, \x1c, \x1d, \x1e), `str.strip` (those, \t, \x1f and space), lines of at least
/// `min_line` characters, the CRC-32 of their UTF-8; the `count` smallest, sorted, no repeats.
/// None for any other text.
#[pyfunction]
fn sketch_hashes_wide(text: &str, min_line: usize, count: usize) -> Option<Vec<u32>> {
    let is_break = |c: char| matches!(c, '\n' | '\r' | '\u{0b}' | '\u{0c}' | '\u{1c}' | '\u{1d}' | '\u{1e}');
    let is_space = |c: char| matches!(c, '\t' | '\n' | '\u{0b}' | '\u{0c}' | '\r' | '\u{1c}'..='\u{1f}' | ' ');
    if !text.chars().all(is_wide_sketch_char) {
        return None;
    }
    let mut hashes: Vec<u32> = Vec::new();
    let mut lowered: Vec<u8> = Vec::with_capacity(256);
    let mut rest = text;
    while !rest.is_empty() {
        let (line, next) = match rest.char_indices().find(|&(_, c)| is_break(c)) {
            Some((i, c)) => {
                let after = if c == '\r' && rest[i + 1..].starts_with('\n') { i + 2 } else { i + 1 };
                (&rest[..i], &rest[after..])
            }
            None => (rest, ""),
        };
        let line = line.trim_matches(is_space);
        if line.chars().count() >= min_line {
            lowered.clear();
            lowered.extend(line.bytes().map(|b| b.to_ascii_lowercase()));
            hashes.push(crc32fast::hash(&lowered));
        }
        rest = next;
    }
    hashes.sort_unstable();
    hashes.dedup();
    hashes.truncate(count);
    Some(hashes)
}

/// The characters `sketch_hashes_wide` takes (the record's sketch too, record.rs): ASCII,
/// `is_shingle_break` ones other than U+00A0 and `is_caseless_cjk` ones.
fn is_wide_sketch_char(c: char) -> bool {
    c.is_ascii() || (c != '\u{a0}' && is_shingle_break(c)) || is_caseless_cjk(c)
}

/// CJK characters the wide sketch reads as they are: the CJK symbols and punctuation less the
/// ideographic space (U+3001–U+303F), kana (U+3040–U+30FF), the unified ideographs and their
/// extension A, and the fullwidth signs that are no letter (U+FF01–U+FF20, U+FF3B–U+FF40,
/// U+FF5B–U+FF65). None has a case, is a space or is a `str` line break, which
/// tests/engine/test_native_differential.py checks for every one of them.
fn is_caseless_cjk(c: char) -> bool {
    matches!(c, '\u{3001}'..='\u{30ff}' | '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}'
        | '\u{ff01}'..='\u{ff20}' | '\u{ff3b}'..='\u{ff40}' | '\u{ff5b}'..='\u{ff65}')
}

/// A set of characters beyond ASCII given as code point ranges (`lo`, `hi` inclusive) by the
/// Python side, which keeps the class it comes from: `found_in(text)` answers whether `text`
/// holds one of them, as a search for the class would (PM404's `disguised` in
/// rules/instructions.py). None for a text holding a lone surrogate: Python decides.
#[pyclass(frozen)]
pub struct CharRanges {
    ranges: Vec<(u32, u32)>,
}

#[pymethods]
impl CharRanges {
    #[new]
    fn new(mut ranges: Vec<(u32, u32)>) -> Self {
        ranges.retain(|&(lo, hi)| lo <= hi);
        ranges.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
        for (lo, hi) in ranges {
            match merged.last_mut() {
                Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        CharRanges { ranges: merged }
    }

    fn found_in(&self, text: &Bound<'_, PyString>) -> Option<bool> {
        let s = text.to_str().ok()?;
        Some(self.holds(s))
    }
}

impl CharRanges {
    fn holds_char(&self, c: char) -> bool {
        let cp = c as u32;
        let i = self.ranges.partition_point(|&(lo, _)| lo <= cp);
        i > 0 && self.ranges[i - 1].1 >= cp
    }

    /// Does `s` hold a character of the ranges? Where none is ASCII (PM404's class), the ASCII
    /// bytes are skipped eight at a time and only the other characters are looked up: a text
    /// is mostly ASCII, and a binary search per character was most of PM404's time on
    /// agent-rule files (an em dash makes the whole text non-ASCII).
    fn holds(&self, s: &str) -> bool {
        if self.ranges.first().is_none_or(|&(lo, _)| lo < 0x80) {
            return s.chars().any(|c| self.holds_char(c));
        }
        let bytes = s.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if i + 8 <= bytes.len() {
                let word = u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap());
                if word & 0x8080_8080_8080_8080 == 0 {
                    i += 8;
                    continue;
                }
            }
            if bytes[i] < 0x80 {
                i += 1;
                continue;
            }
            // `i` starts a character: it follows ASCII bytes or a whole character.
            let c = s[i..].chars().next().unwrap();
            if self.holds_char(c) {
                return true;
            }
            i += c.len_utf8();
        }
        false
    }
}

// -- the near-duplicate shingles ---------------------------------------------------------------

/// Characters beyond ASCII that `_build_shingles` (rules/duplicates.py) reads as a word break
/// whatever surrounds them: `unicodedata.normalize("NFKC", c).casefold()` holds no word
/// character (`[^\W_]`) and no CJK one, and NFKC does not join them with a neighbour from this
/// set or ASCII. Dashes, quotes, bullets, the ellipsis, arrows, Latin-1 signs.
/// tests/engine/test_native_differential.py checks every one of them against `unicodedata`.
fn is_shingle_break(c: char) -> bool {
    matches!(c,
        '\u{a0}'..='\u{a9}' | '\u{ab}'..='\u{b1}' | '\u{b4}' | '\u{b6}'..='\u{b8}' | '\u{bb}' | '\u{bf}'
        | '\u{d7}' | '\u{f7}' | '\u{2010}'..='\u{2016}' | '\u{2018}'..='\u{2027}'
        | '\u{2030}'..='\u{205e}' | '\u{2190}'..='\u{21ff}')
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0100_0000_01b3;

/// FNV-1a (64 bits) of a word with a 0 byte after it (a word holds no 0 byte).
fn word_hash(w: &[u8]) -> u64 {
    let mut h = FNV_OFFSET;
    for &x in w.iter().chain(std::iter::once(&0u8)) {
        h = (h ^ x as u64).wrapping_mul(FNV_PRIME);
    }
    h
}

/// A shingle's hash from its three words' (`word_hash`), in order, as a Python int: the same in
/// every process, unlike `hash` of a tuple. Each word is hashed once, not once per shingle it
/// is in; the three are set apart by their place (rotations, odd multipliers) and mixed by
/// splitmix64's finaliser.
fn shingle_hash(a: u64, b: u64, c: u64) -> i64 {
    let mut h = a.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ b.rotate_left(21).wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
        ^ c.rotate_left(42).wrapping_mul(0x1656_67b1_9e37_79f9);
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^= h >> 31;
    h as i64
}

fn shingle_hashes<W: AsRef<[u8]>>(words: &[W], min_words: usize) -> Vec<i64> {
    shingles_of(&words.iter().map(|w| word_hash(w.as_ref())).collect::<Vec<u64>>(), min_words)
}

/// The sorted, distinct shingle hashes of a text's word hashes; none under `min_words` words.
fn shingles_of(each: &[u64], min_words: usize) -> Vec<i64> {
    if each.len() < min_words {
        return Vec::new();
    }
    let mut hashes: Vec<i64> = Vec::with_capacity(each.len().saturating_sub(2));
    for w in each.windows(3) {
        hashes.push(shingle_hash(w[0], w[1], w[2]));
    }
    hashes.sort_unstable();
    hashes.dedup();
    hashes
}

fn shingle_set<'py, W: AsRef<[u8]>>(py: Python<'py>, words: &[W], min_words: usize) -> PyResult<Bound<'py, PyFrozenSet>> {
    PyFrozenSet::new(py, shingle_hashes(words, min_words).iter())
}

/// A shingle set kept on the Rust side, sorted and without repeats: the same hashes as the
/// frozenset of `text_shingles`/`word_shingles` (`as_set`), its size (`len`) and the size of its
/// intersection with another (`common`), without a Python int per shingle
/// (rules/duplicates.py's `similarity` needs only the two sizes).
#[pyclass(frozen)]
pub struct Shingles {
    hashes: Vec<i64>,
}

#[pymethods]
impl Shingles {
    fn __len__(&self) -> usize {
        self.hashes.len()
    }

    fn __bool__(&self) -> bool {
        !self.hashes.is_empty()
    }

    /// How many hashes both sets hold (a merge of the two sorted lists).
    fn common(&self, other: &Shingles) -> usize {
        let (a, b) = (&self.hashes, &other.hashes);
        let (mut i, mut j, mut n) = (0, 0, 0);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    n += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
        n
    }

    fn as_set<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyFrozenSet>> {
        PyFrozenSet::new(py, self.hashes.iter())
    }
}

/// CJK characters beyond ASCII that `_build_shingles` reads as a word of their own whatever
/// surrounds them: they are in `_CJK` (`[{_CJK}]` makes each one a word), NFKC and casefold keep
/// them, and NFKC joins them with no neighbour (each is a starter no composition takes as its
/// second character). Kana (less U+3040, U+3097–U+309C, U+309F and U+30FF, which NFKC changes
/// or joins), the unified ideographs and their extension A, the Hangul syllables.
/// tests/engine/test_native_differential.py checks every one of them against `unicodedata`.
fn is_cjk_word(c: char) -> bool {
    matches!(c, '\u{3041}'..='\u{3096}' | '\u{309d}'..='\u{309e}' | '\u{30a0}'..='\u{30fe}'
        | '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}' | '\u{ac00}'..='\u{d7a3}')
}

/// CJK punctuation `_build_shingles` reads as a word break, as `is_shingle_break`: the ideographic
/// comma, full stop and brackets (U+3001–U+3003, U+3008–U+3011, U+3014–U+301F) and the fullwidth
/// and halfwidth signs NFKC makes ASCII or CJK punctuation (U+FF01–U+FF0F, U+FF1A–U+FF20,
/// U+FF3B–U+FF40, U+FF5B–U+FF64). Checked as `is_shingle_break` is.
fn is_cjk_break(c: char) -> bool {
    matches!(c, '\u{3001}'..='\u{3003}' | '\u{3008}'..='\u{3011}' | '\u{3014}'..='\u{301f}'
        | '\u{ff01}'..='\u{ff0f}' | '\u{ff1a}'..='\u{ff20}' | '\u{ff3b}'..='\u{ff40}' | '\u{ff5b}'..='\u{ff64}')
}

/// The `word_hash` of each word of the text, in order, as `_build_shingles` finds the words:
/// ASCII lowered, a run of ASCII letters and digits a word, every other ASCII character and each
/// `is_shingle_break` or `is_cjk_break` character a break, each `is_cjk_word` character a word of
/// its own. None where the text holds any other character. One pass, no copy of the text.
fn text_word_hashes(text: &str) -> Option<Vec<u64>> {
    let b = text.as_bytes();
    let mut out: Vec<u64> = Vec::with_capacity(b.len() / 6 + 1);
    let (mut h, mut in_word) = (FNV_OFFSET, false);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c < 0x80 {
            let l = c.to_ascii_lowercase();
            if l.is_ascii_alphanumeric() {
                h = (h ^ l as u64).wrapping_mul(FNV_PRIME);
                in_word = true;
            } else if in_word {
                out.push(h.wrapping_mul(FNV_PRIME)); // the 0 byte after the word: `h ^ 0`
                (h, in_word) = (FNV_OFFSET, false);
            }
            i += 1;
            continue;
        }
        let ch = text[i..].chars().next()?;
        let n = ch.len_utf8();
        let cjk = is_cjk_word(ch);
        if !(cjk || is_shingle_break(ch) || is_cjk_break(ch)) {
            return None;
        }
        if in_word {
            out.push(h.wrapping_mul(FNV_PRIME));
            (h, in_word) = (FNV_OFFSET, false);
        }
        if cjk {
            out.push(word_hash(&b[i..i + n]));
        }
        i += n;
    }
    if in_word {
        out.push(h.wrapping_mul(FNV_PRIME));
    }
    Some(out)
}

/// The word 3-shingles of a text made of ASCII, `is_shingle_break`, `is_cjk_break` and
/// `is_cjk_word` characters only, as `_build_shingles` finds them (NFKC and casefold are ASCII
/// lowering there, a word is a run of ASCII letters and digits or one CJK character), hashed by `shingle_hash`; empty under `min_words` words. None for
/// any other text: the caller finds its words and hands them to `word_shingles`.
#[pyfunction]
fn text_shingles<'py>(py: Python<'py>, text: &str, min_words: usize) -> PyResult<Option<Bound<'py, PyFrozenSet>>> {
    let Some(each) = text_word_hashes(text) else { return Ok(None) };
    PyFrozenSet::new(py, shingles_of(&each, min_words).iter()).map(Some)
}

/// `text_shingles` as a `Shingles`.
#[pyfunction]
fn text_shingle_array(text: &str, min_words: usize) -> Option<Shingles> {
    let each = text_word_hashes(text)?;
    Some(Shingles { hashes: shingles_of(&each, min_words) })
}

/// `word_shingles` as a `Shingles`.
#[pyfunction]
fn word_shingle_array(words: Vec<String>, min_words: usize) -> Shingles {
    Shingles { hashes: shingle_hashes(&words, min_words) }
}

/// The 3-shingles of `words` (found by the caller), hashed as `text_shingles` hashes them.
#[pyfunction]
fn word_shingles<'py>(py: Python<'py>, words: Vec<String>, min_words: usize) -> PyResult<Bound<'py, PyFrozenSet>> {
    shingle_set(py, &words, min_words)
}

/// SHA-256 of the Python code each use ("group") of this core follows, as
/// pmem_lsp/engine/native_mirrors.py computes it and native_mirrors.json holds it (that file names,
/// per group, the Python functions, patterns and tables, and the Rust twin here). pmem uses the
/// core for a group only while its digest here is the committed one; when the Python code of a
/// group changes, check its Rust twin against it, then set the digest here to the new one and
/// rebuild (make native). Until then that group runs the pure-Python path.
const WRITTEN_FOR_BLOCKS: &str = "f178e6d8c2058e6d19ff900414d1705b6b5dc148823b2b035542a2d14c5fb885";
const WRITTEN_FOR_RECORD: &str = "104a6554e7f72408d57e48117c4838433c03dc76bd9f5953547343c87b3310c2";
const WRITTEN_FOR_SUMMARY: &str = "e94027c49198f849b7dc8d749d1c6204c14881e357e6fd225588d4a250ed68ca";
const WRITTEN_FOR_CONCLUDED: &str = "efb7bd1cf4f7135c18de954bbde7acd3ee05c2c7da2e7295bff7c2249e8d82cd";
const WRITTEN_FOR_POINTERS: &str = "1780f201041aba3802ce78a88d0ab943ada2cf5063948f9c6f81b01ba730668e";
const WRITTEN_FOR_LINK_TARGETS: &str = "09be26b18cf56399f4e498ee0ee0ffab6a64ca062818ec0385d9b03d3cc21a86";
const WRITTEN_FOR_PM404: &str = "25a1c2759c1a4e45c7f1f112a2e42d348dad5f509715100464248f48afd4c13c";
const WRITTEN_FOR_SKETCH: &str = "c8f85d3930951b001e5eea96f58be040b5515b029df1ad9d02f6ac02b4395ef8";
const WRITTEN_FOR_PM208: &str = "fe679fda7d9916a736ff3639b26226d0083228bc3cb051fe3b2ef1afc8b93055";
const WRITTEN_FOR_SHINGLES: &str = "721c03ac3634bc70166b96a40fabdc4e9bfc119de6bb8140dd535e645b23249d";
const WRITTEN_FOR_SECRETS: &str = "7f6e4ad948f7f229f7708c2ff11e6bca8e9a5fb3a8662d0933e88fe55d29be79";
const WRITTEN_FOR_ROUTES: &str = "3e963f76f7c278a2aaea578ce45e0c87bb57c1fb742ba11177de7dd298fa45e9";

#[pymodule]
fn pmem_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add("PM404_PATTERNS", PM404_PATTERNS)?;
    m.add("PM208_PATTERNS", PM208_PATTERNS)?;
    m.add("WRITTEN_FOR_BLOCKS", WRITTEN_FOR_BLOCKS)?;
    m.add("WRITTEN_FOR_RECORD", WRITTEN_FOR_RECORD)?;
    m.add("WRITTEN_FOR_SUMMARY", WRITTEN_FOR_SUMMARY)?;
    m.add("WRITTEN_FOR_CONCLUDED", WRITTEN_FOR_CONCLUDED)?;
    m.add("WRITTEN_FOR_POINTERS", WRITTEN_FOR_POINTERS)?;
    m.add("WRITTEN_FOR_LINK_TARGETS", WRITTEN_FOR_LINK_TARGETS)?;
    m.add("WRITTEN_FOR_PM404", WRITTEN_FOR_PM404)?;
    m.add("WRITTEN_FOR_SKETCH", WRITTEN_FOR_SKETCH)?;
    m.add("WRITTEN_FOR_PM208", WRITTEN_FOR_PM208)?;
    m.add("WRITTEN_FOR_SECRETS", WRITTEN_FOR_SECRETS)?;
    m.add("WRITTEN_FOR_ROUTES", WRITTEN_FOR_ROUTES)?;
    m.add("WRITTEN_FOR_SHINGLES", WRITTEN_FOR_SHINGLES)?;
    m.add_class::<CharRanges>()?;
    m.add_class::<Shingles>()?;
    m.add_function(wrap_pyfunction!(text_shingle_array, m)?)?;
    m.add_function(wrap_pyfunction!(word_shingle_array, m)?)?;
    m.add_function(wrap_pyfunction!(instruction_lines, m)?)?;
    m.add_function(wrap_pyfunction!(fast_part, m)?)?;
    m.add_function(wrap_pyfunction!(sketch_hashes, m)?)?;
    m.add_function(wrap_pyfunction!(sketch_hashes_wide, m)?)?;
    m.add_function(wrap_pyfunction!(text_shingles, m)?)?;
    m.add_function(wrap_pyfunction!(word_shingles, m)?)?;
    m.add_function(wrap_pyfunction!(volatile_candidates, m)?)?;
    m.add_function(wrap_pyfunction!(record::file_record, m)?)?;
    m.add_function(wrap_pyfunction!(record::link_targets, m)?)?;
    m.add_function(wrap_pyfunction!(secrets::secrets_clear, m)?)?;
    m.add_function(wrap_pyfunction!(secrets::secret_doors_lines, m)?)?;
    m.add_function(wrap_pyfunction!(routes::link_route, m)?)?;
    m.add_function(wrap_pyfunction!(secrets::disguise_fold, m)?)?;
    m.add("SKETCH_MIN_LINE", record::SKETCH_MIN_LINE)?;
    m.add("SKETCH_COUNT", record::SKETCH_COUNT)?;
    Ok(())
}

// -- the block scanner's fast path ------------------------------------------------------------
//
// `fast_part` is `_fast_part` of pmem_lsp/engine/markdown.py, line for line: the scan of a
// document made of the simple constructs most memory files hold, stopping (a "cut") at the
// first line outside them, where the Python side hands over to its full scanner. A cut is
// always allowed (the full scanner gives the reference answer from there), so wherever this
// code is unsure of a Python detail it cuts: an HTML tag name followed by a letter Python's
// `(?i)` folds onto an ASCII one, an ordered-list number followed by a non-ASCII character
// (Python's `\d` takes every Unicode digit), a line holding a newline (`$` matches before one),
// a line that is not valid UTF-8.

/// Python's `str.isspace()`.
fn is_py_space(c: char) -> bool {
    if c.is_ascii() {
        is_py_space_ascii(c as u8)
    } else {
        is_py_space_wide(c)
    }
}

/// Python's `str.strip()`.
fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

fn is_special(b: u8) -> bool {
    matches!(b, b'#' | b'`' | b'~' | b'*' | b'+' | b'_' | b'=' | b'<' | b'>' | b'-' | b'0'..=b'9')
}

fn space_or_tab(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn run_of(s: &[u8], c: u8) -> usize {
    s.iter().take_while(|&&b| b == c).count()
}

/// `_RE_ATX.match(s)`: its length, or None.
fn atx(s: &[u8]) -> Option<usize> {
    let k = run_of(s, b'#');
    if k == 0 || k > 6 {
        return None;
    }
    if k == s.len() {
        return Some(k);
    }
    if !space_or_tab(s[k]) {
        return None;
    }
    Some(k + s[k..].iter().take_while(|&&b| space_or_tab(b)).count())
}

/// `_fence_open(s)`: the length of the opening run, or None.
fn fence_open(s: &[u8]) -> Option<usize> {
    let c = *s.first()?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let k = run_of(s, c);
    if k < 3 || (c == b'`' && s[k..].contains(&b'`')) {
        return None;
    }
    Some(k)
}

/// `_RE_CLOSING_FENCE.match(s)`: the length of the run, or None.
fn closing_fence(s: &[u8]) -> Option<usize> {
    let c = *s.first()?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let k = run_of(s, c);
    if k < 3 || !s[k..].iter().all(|&b| space_or_tab(b)) {
        return None;
    }
    Some(k)
}

/// `_RE_SETEXT.match(s) is not None`.
fn setext(s: &[u8]) -> bool {
    match s.first() {
        Some(&c) if c == b'=' || c == b'-' => {
            let k = run_of(s, c);
            s[k..].iter().all(|&b| space_or_tab(b))
        }
        _ => false,
    }
}

/// `_thematic(s)`.
fn thematic(s: &[u8]) -> bool {
    match s.first() {
        Some(&c) if c == b'*' || c == b'_' || c == b'-' => {
            s.iter().all(|&b| b == c || space_or_tab(b)) && s.iter().filter(|&&b| b == c).count() >= 3
        }
        _ => false,
    }
}

enum Ordered {
    No,
    Unsure,
    Yes(usize, u64), // the match's length (digits and delimiter), the number
}

/// `_RE_ORDERED.match(s)`.
fn ordered(s: &[u8]) -> Ordered {
    let k = s.iter().take_while(|b| b.is_ascii_digit()).count();
    if k < s.len() && s[k] >= 0x80 {
        return Ordered::Unsure;
    }
    if k == 0 || k > 9 || k >= s.len() || (s[k] != b'.' && s[k] != b')') {
        return Ordered::No;
    }
    let value = s[..k].iter().fold(0u64, |v, b| v * 10 + u64::from(b - b'0'));
    Ordered::Yes(k + 1, value)
}

/// `_inline_start(s)`: Some(answer), or None where unsure (the caller cuts).
fn inline_start(s: &[u8]) -> Option<bool> {
    let c = s[0];
    if !is_special(c) {
        return Some(true);
    }
    Some(match c {
        b'#' => atx(s).is_none(),
        b'`' | b'~' => fence_open(s).is_none(),
        b'*' | b'+' | b'-' => {
            if s.len() < 2 || space_or_tab(s[1]) {
                false
            } else if c == b'+' {
                true
            } else {
                !thematic(s) && (c == b'*' || !setext(s))
            }
        }
        b'_' => !thematic(s),
        b'<' => !html_block_start(s)?,
        b'=' | b'>' => false,
        _ => match ordered(s) {
            Ordered::Unsure => return None,
            Ordered::No => true,
            Ordered::Yes(e, _) => s.len() > e && !space_or_tab(s[e]),
        },
    })
}

// The tag names of HTML blocks of types 1 and 6 (markdown.py's `_HTML_OPEN`, `_BLOCK_TAGS`).
const HTML_TYPE1: [&str; 4] = ["script", "pre", "textarea", "style"];
const HTML_TYPE6: [&str; 62] = [
    "address", "article", "aside", "base", "basefont", "blockquote", "body", "caption", "center", "col",
    "colgroup", "dd", "details", "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure",
    "footer", "form", "frame", "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "head", "header", "hr",
    "html", "iframe", "legend", "li", "link", "main", "menu", "menuitem", "nav", "noframes", "ol",
    "optgroup", "option", "p", "param", "search", "section", "summary", "table", "tbody", "td", "tfoot",
    "th", "thead", "title", "tr", "track", "ul",
];

/// Does one of `_HTML_OPEN`'s seven patterns match at the start of `s` (which starts with `<`)?
/// None where unsure: a letter Python's `(?i)` folds onto an ASCII one (ſ K ı İ) right after a
/// tag name's ASCII letters.
fn html_block_start(s: &[u8]) -> Option<bool> {
    let text = std::str::from_utf8(s).ok()?;
    let cs: Vec<char> = text.chars().collect();
    let n = cs.len();
    // Types 2 to 5: `<!--`, `<?`, `<!` and an ASCII letter, `<![CDATA[`.
    if n >= 2 && cs[1] == '?' {
        return Some(true);
    }
    if n >= 2 && cs[1] == '!' {
        return Some(
            text.starts_with("<!--") || text.starts_with("<![CDATA[") || (n >= 3 && cs[2].is_ascii_alphabetic()),
        );
    }
    // Types 1 and 6 (case-insensitive): a tag name (after `/` for type 6), then `\s`, `>`, the
    // end, or for type 6 `/>`.
    let closing = n >= 2 && cs[1] == '/';
    let start = if closing { 2 } else { 1 };
    let mut j = start;
    while j < n && cs[j].is_ascii_alphanumeric() {
        j += 1;
    }
    if j < n && folds_to_ascii(cs[j]) {
        return None;
    }
    let name: String = cs[start..j].iter().map(|c| c.to_ascii_lowercase()).collect();
    let at_end = j == n;
    let space = j < n && is_py_space(cs[j]);
    let gt = j < n && cs[j] == '>';
    let slash_gt = j + 1 < n && cs[j] == '/' && cs[j + 1] == '>';
    if !closing && HTML_TYPE1.contains(&name.as_str()) && (space || gt || at_end) {
        return Some(true);
    }
    if HTML_TYPE6.contains(&name.as_str()) && (space || gt || slash_gt || at_end) {
        return Some(true);
    }
    Some(html_type7(&cs))
}

/// `_HTML_OPEN[7]` (case-sensitive): an open tag with its attributes, or a closing tag, alone
/// on the line.
fn html_type7(cs: &[char]) -> bool {
    let n = cs.len();
    let spaces = |mut p: usize| -> usize {
        while p < n && is_py_space(cs[p]) {
            p += 1;
        }
        p
    };
    let name_end = |mut p: usize| -> usize {
        while p < n && (cs[p].is_ascii_alphanumeric() || cs[p] == '-') {
            p += 1;
        }
        p
    };
    let closing = n >= 2 && cs[1] == '/';
    let start = if closing { 2 } else { 1 };
    if start >= n || !cs[start].is_ascii_alphabetic() {
        return false;
    }
    let mut pos = name_end(start + 1);
    if closing {
        pos = spaces(pos);
    } else {
        loop {
            let after_ws = spaces(pos);
            let attr_start = after_ws < n && (cs[after_ws].is_ascii_alphabetic() || cs[after_ws] == '_' || cs[after_ws] == ':');
            if after_ws == pos || !attr_start {
                pos = after_ws;
                break;
            }
            let mut p = after_ws + 1;
            while p < n && (cs[p].is_ascii_alphanumeric() || matches!(cs[p], '_' | '.' | ':' | '-')) {
                p += 1;
            }
            pos = p;
            // An optional value: `\s*=\s*` then unquoted, 'single' or "double" quoted.
            let eq = spaces(p);
            if eq < n && cs[eq] == '=' {
                let v = spaces(eq + 1);
                if v < n && (cs[v] == '\'' || cs[v] == '"') {
                    if let Some(k) = cs[v + 1..].iter().position(|&c| c == cs[v]) {
                        pos = v + 1 + k + 1;
                    }
                } else {
                    let mut e = v;
                    while e < n && !matches!(cs[e], '"' | '\'' | '=' | '<' | '>' | '`') && cs[e] > ' ' {
                        e += 1;
                    }
                    if e > v {
                        pos = e;
                    }
                }
            }
        }
        if pos < n && cs[pos] == '/' {
            pos += 1;
        }
    }
    if pos >= n || cs[pos] != '>' {
        return false;
    }
    spaces(pos + 1) == n
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    None,
    Para,
    Item,
    ItemGap,
    Fence,
    Comment,
    Quote,
    QuoteGap,
}

// What a line ended up in: indices into the `kinds` tuple the caller passes
// (BLANK, PARAGRAPH, HEADING, CODE, HTML, BREAK of markdown.py).
const BLANK: u8 = 0;
const PARAGRAPH: u8 = 1;
const HEADING: u8 = 2;
const CODE: u8 = 3;
const HTML: u8 = 4;
const BREAK: u8 = 5;

type HeadingRow = (i64, i64, String, bool, bool, i64);
type FenceRow = (i64, i64, String, bool);
type ItemRow = (i64, i64, bool, bool, String, i64);

struct Found {
    headings: Vec<HeadingRow>,
    fences: Vec<FenceRow>,
    items: Vec<ItemRow>,
    kinds: Vec<u8>,
}

/// The heading text of an ATX line after its opening run: closing `#`s removed
/// (`_RE_ATX_TRAILING_ONLY`, then `_RE_ATX_TRAILING`), then Python's `strip()`.
fn atx_text(text: &str) -> &str {
    let mut text = text;
    if text.contains('#') {
        let b = text.as_bytes();
        let lead = b.iter().take_while(|&&x| space_or_tab(x)).count();
        let hashes = run_of(&b[lead..], b'#');
        if hashes > 0 && b[lead + hashes..].iter().all(|&x| space_or_tab(x)) {
            text = "";
        } else {
            let r = text.trim_end_matches([' ', '\t']);
            let h = r.trim_end_matches('#');
            if h.len() < r.len() && (h.ends_with(' ') || h.ends_with('\t')) {
                text = h.trim_end_matches([' ', '\t']);
            }
        }
    }
    py_strip(text)
}

/// `_quote_line`: the kind of a line of a top-level block quote of plain paragraphs (an
/// Obsidian callout), or of the line after one, and the state after it; None where the full
/// scanner must read the line.
fn quote_line(b: &[u8], state: State) -> Option<(u8, State)> {
    if b.first() != Some(&b'>') {
        if b.iter().all(|&x| x == b' ') {
            return Some((BLANK, State::None)); // (spaces only: a tab is the full scanner's)
        }
        let c = b[0];
        if !is_special(c) && c != b' ' && c != b'\t' {
            // a lazy continuation, or (after a blank quote line) a paragraph after the quote
            return Some((PARAGRAPH, if state == State::Quote { State::Quote } else { State::Para }));
        }
        return None;
    }
    let rest = if b.get(1) == Some(&b' ') { &b[2..] } else { &b[1..] };
    if rest.iter().all(|&x| x == b' ') {
        return Some((BLANK, State::QuoteGap));
    }
    let c = rest[0];
    if c == b' ' || c == b'\t' || (is_special(c) && !inline_start(rest)?) {
        return None;
    }
    Some((PARAGRAPH, State::Quote))
}

/// `truncated`: `lines` stop before a line this code cannot read, so the scan cuts at their end
/// at the latest.
fn scan_fast(lines: &[&str], first_line: i64, truncated: bool) -> (Found, Option<usize>) {
    let mut f = Found { headings: Vec::new(), fences: Vec::new(), items: Vec::new(), kinds: Vec::new() };
    let mut state = State::None;
    let mut para_start = 0usize;
    let mut bullet = String::new();
    let mut item_line = 0i64;
    let mut item_ordered = false;
    let mut item_col = 2i64;
    let (mut fence_char, mut fence_info, mut fence_len, mut fence_start) = (0u8, String::new(), 0usize, 0i64);
    let mut safe = first_line;
    let mut n = first_line - 1;

    macro_rules! close_item {
        () => {
            if state == State::Item || state == State::ItemGap {
                f.items.push((item_line, n, true, item_ordered, bullet.clone(), item_col));
            }
        };
    }
    macro_rules! cut {
        () => {
            return cut(f, safe, first_line)
        };
    }
    for (idx, &ln) in lines.iter().enumerate() {
        n += 1;
        let b = ln.as_bytes();
        if b.contains(&b'\n') {
            cut!();
        }
        match state {
            State::None => safe = n,
            State::Fence => {
                f.kinds.push(CODE);
                let s = ln.trim_start_matches(' ').as_bytes();
                if s.first() == Some(&fence_char) && b.len() - s.len() <= 3 {
                    if let Some(k) = closing_fence(s) {
                        if k >= fence_len {
                            f.fences.push((fence_start, n + 1, fence_info.clone(), true));
                            state = State::None;
                        }
                    }
                }
                continue;
            }
            State::Comment => {
                f.kinds.push(HTML);
                if ln.contains("-->") {
                    state = State::None;
                }
                continue;
            }
            _ => {}
        }
        if b.first() == Some(&b'>') || state == State::Quote || state == State::QuoteGap {
            close_item!(); // a quote at the margin closes an open item
            if state == State::Item || state == State::ItemGap {
                state = State::None;
            }
            match quote_line(b, state) {
                None => cut!(),
                Some((kind, next)) => {
                    f.kinds.push(kind);
                    state = next;
                    if state == State::Para {
                        para_start = idx;
                    }
                    continue;
                }
            }
        }
        let mut c = b.first().copied().unwrap_or(0);
        if c != 0 && !is_special(c) && c != b' ' && c != b'\t' {
            f.kinds.push(PARAGRAPH);
            if state == State::None || state == State::ItemGap {
                if state == State::ItemGap {
                    f.items.push((item_line, n, true, item_ordered, bullet.clone(), item_col));
                }
                state = State::Para;
                para_start = idx;
            }
            continue;
        }
        if (c == b'-' || c == b'*' || c == b'+') && b.get(1) == Some(&b' ') {
            if let Some(&c2) = b.get(2) {
                if c2 != b' ' && c2 != b'\t' {
                    let starts_item = if !is_special(c2) {
                        true
                    } else {
                        match inline_start(&b[2..]) {
                            None => cut!(),
                            Some(yes) => yes && !(c != b'+' && thematic(b)),
                        }
                    };
                    if starts_item {
                        close_item!();
                        bullet = (c as char).to_string();
                        item_line = n;
                        item_ordered = false;
                        item_col = 2;
                        state = State::Item;
                        f.kinds.push(PARAGRAPH);
                        continue;
                    }
                }
            }
        }
        if c == b' ' {
            let s = ln.trim_start_matches(' ').as_bytes();
            if s.is_empty() {
                c = 0;
            } else {
                if s[0] == b'\t' {
                    cut!();
                }
                match inline_start(s) {
                    None | Some(false) => cut!(),
                    Some(true) => {}
                }
                f.kinds.push(PARAGRAPH);
                if state == State::Para || state == State::Item {
                    continue;
                }
                if b.len() - s.len() > (if state == State::None { 3 } else { 1 }) {
                    cut!();
                }
                if state == State::ItemGap {
                    f.items.push((item_line, n, true, item_ordered, bullet.clone(), item_col));
                }
                state = State::Para;
                para_start = idx;
                continue;
            }
        }
        if c == 0 || c == b'\t' {
            if !ln.trim_matches([' ', '\t']).is_empty() {
                cut!();
            }
            f.kinds.push(BLANK);
            if state == State::Item {
                state = State::ItemGap;
            } else if state == State::Para {
                state = State::None;
            }
            continue;
        }
        match inline_start(b) {
            None => cut!(),
            Some(true) => {
                f.kinds.push(PARAGRAPH);
                if state == State::None || state == State::ItemGap {
                    if state == State::ItemGap {
                        f.items.push((item_line, n, true, item_ordered, bullet.clone(), item_col));
                    }
                    state = State::Para;
                    para_start = idx;
                }
                continue;
            }
            Some(false) => {}
        }
        if c.is_ascii_digit() {
            let (e, value) = match ordered(b) {
                Ordered::Yes(e, value) => (e, value),
                _ => cut!(),
            };
            if b.get(e) != Some(&b' ') {
                cut!();
            }
            match b.get(e + 1) {
                None | Some(b' ') | Some(b'\t') => cut!(),
                _ => {}
            }
            match inline_start(&b[e + 1..]) {
                None | Some(false) => cut!(),
                Some(true) => {}
            }
            if state == State::Para && value != 1 {
                f.kinds.push(PARAGRAPH);
                continue;
            }
            close_item!();
            bullet = ln[..e].to_string();
            item_line = n;
            item_ordered = true;
            item_col = (e + 1) as i64;
            state = State::Item;
            f.kinds.push(PARAGRAPH);
            continue;
        }
        if c == b'<' {
            if !b.starts_with(b"<!--") {
                cut!();
            }
            close_item!();
            state = State::None;
            f.kinds.push(HTML);
            if !ln.contains("-->") {
                state = State::Comment;
            }
            continue;
        }
        if c == b'-' || c == b'*' || c == b'+' || c == b'_' {
            if c == b'-' && state == State::Para && setext(b) {
                // a setext underline, below
            } else if c != b'+' && thematic(b) {
                close_item!();
                state = State::None;
                f.kinds.push(BREAK);
                continue;
            } else {
                cut!();
            }
        }
        if c == b'-' || c == b'=' {
            if state != State::Para || !setext(b) {
                cut!();
            }
            let content: Vec<&str> = lines[para_start..idx].iter().map(|p| p.trim_start_matches(' ')).collect();
            let content = content.join("\n");
            let level = if c == b'=' { 1 } else { 2 };
            f.headings.push((first_line + para_start as i64, level, py_strip(&content).to_string(), true, true, n));
            state = State::None;
            f.kinds.push(HEADING);
            continue;
        }
        if c == b'#' {
            let m = match atx(b) {
                Some(m) => m,
                None => cut!(),
            };
            close_item!();
            let level = run_of(b, b'#') as i64;
            f.headings.push((n, level, atx_text(&ln[m..]).to_string(), true, false, n));
            state = State::None;
            f.kinds.push(HEADING);
            continue;
        }
        if c == b'`' || c == b'~' {
            let k = match fence_open(b) {
                Some(k) => k,
                None => cut!(),
            };
            close_item!();
            fence_len = k;
            fence_char = c;
            fence_info = py_strip(&ln[k..]).to_string();
            fence_start = n;
            state = State::Fence;
            f.kinds.push(CODE);
            continue;
        }
        cut!();
    }
    if truncated {
        if state == State::None {
            safe = n + 1;
        }
        cut!();
    }
    let end = first_line + lines.len() as i64;
    if state == State::Item || state == State::ItemGap {
        f.items.push((item_line, end, true, item_ordered, bullet.clone(), item_col));
    } else if state == State::Fence {
        f.fences.push((fence_start, end, fence_info, false));
    }
    (f, None)
}

/// `_cut`: what was found before line `safe` (absolute), where no block was open.
fn cut(mut f: Found, safe: i64, first_line: i64) -> (Found, Option<usize>) {
    f.items.retain(|it| it.0 < safe);
    f.kinds.truncate((safe - first_line) as usize);
    f.headings.retain(|h| h.5 < safe);
    f.fences.retain(|x| x.0 < safe);
    (f, Some((safe - first_line) as usize))
}

/// `_fast_part(lines, first_line)` of markdown.py, as rows: (headings, fences, items, line
/// kinds, top item of each line, stop). Headings are (line, level, text, top_level, setext,
/// end_line), fences (start, end, info, closed), items (line, end, top_level, ordered, marker,
/// content_col), as the dataclasses' fields; the kinds are the objects of `kinds` (a tuple of
/// six: BLANK, PARAGRAPH, HEADING, CODE, HTML, BREAK); stop is None or where the full scanner
/// must take over.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn fast_part<'py>(
    py: Python<'py>,
    lines: &Bound<'py, PyList>,
    first_line: i64,
    kinds: &Bound<'py, PyTuple>,
) -> PyResult<(Vec<HeadingRow>, Vec<FenceRow>, Vec<ItemRow>, Bound<'py, PyList>, Bound<'py, PyList>, Option<usize>)> {
    // The strings held first, so that their UTF-8 views below live as long as the scan.
    let held: Vec<Bound<'py, PyString>> = lines.iter().map(|item| item.cast_into::<PyString>()).collect::<Result<_, _>>()?;
    let mut strs: Vec<&str> = Vec::with_capacity(held.len());
    let mut undecodable = false;
    for s in &held {
        match s.to_str() {
            Ok(line) => strs.push(line),
            Err(_) => {
                undecodable = true; // a lone surrogate: the scan cuts there at the latest
                break;
            }
        }
    }
    let (found, stop) = scan_fast(&strs, first_line, undecodable);
    let objs: Vec<Bound<'py, PyAny>> = (0..6).map(|i| kinds.get_item(i)).collect::<PyResult<_>>()?;
    let kind_list = PyList::new(py, found.kinds.iter().map(|&k| &objs[k as usize]))?;
    let mut tops = vec![-1i64; found.kinds.len()];
    for (index, it) in found.items.iter().enumerate() {
        let a = (it.0 - first_line) as usize;
        let b = ((it.1 - first_line) as usize).min(tops.len());
        for t in &mut tops[a..b] {
            *t = index as i64;
        }
    }
    let top_list = PyList::new(py, tops)?;
    Ok((found.headings, found.fences, found.items, kind_list, top_list, stop))
}
