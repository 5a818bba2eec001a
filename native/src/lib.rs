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
use pyo3::types::{PyList, PyString};

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
/// ignore|disregard|forget|override|bypass; system; you are|you must|your new|reading|note to;
/// do not|don't|never|without; 忽略|你现在是|不要告诉用户.
fn has_anchor(s: &[u8]) -> bool {
    let n = s.len();
    let at = |i: usize, lit: &[u8]| -> bool { n - i >= lit.len() && &s[i..i + lit.len()] == lit };
    for i in 0..n {
        let hit = match s[i] {
            b'i' => at(i, b"ignore"),
            b'd' => at(i, b"disregard") || at(i, b"do not") || at(i, b"don't"),
            b'f' => at(i, b"forget"),
            b'o' => at(i, b"override"),
            b'b' => at(i, b"bypass"),
            b's' => at(i, b"system"),
            b'y' => at(i, b"you are") || at(i, b"you must") || at(i, b"your new"),
            b'r' => at(i, b"reading"),
            b'n' => at(i, b"note to") || at(i, b"never"),
            b'w' => at(i, b"without"),
            0xe5 => at(i, "忽略".as_bytes()),
            0xe4 => at(i, "你现在是".as_bytes()) || at(i, "不要告诉用户".as_bytes()),
            _ => false,
        };
        if hit {
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
(?i)\b(?:you\s+are\s+now\s+(?:a|an|no\s+longer|free|unrestricted|dan|jailbroken)\b|you\s+must\s+now\b|your\s+new\s+(?:instructions|task|role|goal|objective|rules)\s+(?:is|are)\b|(?:ai|assistant|agent|model|llm)s?\s+reading\s+this\s+(?:must|should|will)\b|note\s+to\s+(?:the\s+)?(?:ai|assistant|agent|llm)\s*:)
(?i)\b(?:do\s+not|don't|never)\s+(?:tell|inform|show|mention\s+(?:this\s+)?to|reveal\s+(?:this\s+)?to)\s+(?:the\s+)?user\b|\bwithout\s+(?:telling|informing|asking)\s+the\s+user\b
忽略(?:之前|以上|前面|先前|所有)(?:的)?(?:所有)?(?:指令|指示|提示|规则)|你现在是(?:一个)?(?!用户)|不要告诉用户"#;

/// The indices of the lines PM404 must look at (see the module's comment).
#[pyfunction]
fn instruction_lines(lines: &PyList) -> PyResult<Vec<usize>> {
    let mut out = Vec::new();
    let mut buf = Vec::with_capacity(256);
    for (i, item) in lines.iter().enumerate() {
        let s: &PyString = item.downcast()?;
        let line = match s.to_str() {
            Ok(line) => line,
            Err(_) => {
                // A lone surrogate (an undecodable byte kept by the reader): Python decides.
                out.push(i);
                continue;
            }
        };
        if !normalise(line, &mut buf) || has_anchor(&buf) {
            out.push(i);
        }
    }
    Ok(out)
}

#[pymodule]
fn pmem_native(_py: Python<'_>, m: &PyModule) -> PyResult<()> {
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add("PM404_PATTERNS", PM404_PATTERNS)?;
    m.add_function(wrap_pyfunction!(instruction_lines, m)?)?;
    Ok(())
}
