//! `secrets_clear`: PM401's "surely nothing here" verdict, and `secret_doors_lines` (docs/native.md, "The PM401 verdict").
//!
//! The core does not look for secrets; it only rules out that the Python scan
//! (pmem_lsp/engine/secrets/) could find one. Every finding there comes in through one of a few
//! doors, each with a plain precondition in the code that opens it, and the verdict holds only
//! where every door is shut:
//!
//! - a shaped token (and so an AWS or Twilio pair) only on a line holding a run of 20 bytes of
//!   `_RUN_TABLE`'s set (`_find_secrets` skips the other lines);
//! - a private key block only on a line holding `----begin` in any case (`_pem._BEGIN`) or
//!   `PuTTY-User-Key-File-` (`_pem._PUTTY`, whose `Key` and `:` shut the named door below);
//! - a credential in a URL only on a line holding both `@` and `://`;
//! - a key-named value, a flag, a table cell, an Azure key, a secret in a linked path or in a
//!   path's segment only on a line holding a prefilter word (`_generic.PREFILTER`, lowered) and
//!   one of the signs the code tests for first (`:`, `=`, ` is `, ` are `, `--`, `|`, `：`, `是`,
//!   `为`);
//! - the disguised view (`_disguise.fold`): every door above is tested on the folded line too
//!   (`fold`, `_FOLD`'s table, held to it on every character), and a line holding a letter that
//!   Python's case folding maps to ASCII (İ ı ſ K) is left to the scan (the CJK prefilter words
//!   and signs count with the ASCII ones above);
//! - the rendered view (`_markup.fold`) only where one of `_markup._PIECE`'s pieces can start
//!   (`piece_at`): a `*` or `~` between characters its look-behind and look-ahead accept, a `<`
//!   after such a character before `!` or an inline tag, a `&` before `#` or a name and `;`, a
//!   `\` between a letter or digit and the character it escapes;
//! - a token broken over two lines (`_disguise.joins`) only where a line ends in 4 or more of
//!   its token characters and the next starts (after spaces and tabs) with 4 or more, 20 in all.
//!
//! Each test is a superset of its door's, so a false verdict only costs the Python scan that runs
//! anyway. Where the verdict is no, `secret_doors_lines` names the doors that are open (`PLAIN` for a
//! line's own, `FOLDS`, `MARKUP`, `JOIN`, `CASE`), and `find_secrets` runs only the parts of the
//! scan behind them: each door's part finds nothing where its test says shut. tests/engine/test_native_secrets.py holds the verdict to `check_secrets` and
//! `find_in_name`, and WRITTEN_FOR_SECRETS (lib.rs) to the code it follows.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use super::{folds_to_ascii, LETTER_BITS};

const RUN: u8 = 1; // `_RUN_TABLE`: [A-Za-z0-9_\-%]
const TOKEN: u8 = 2; // `_disguise._T` and `_markup._B`: [A-Za-z0-9_\-+/=]
const PIECE: u8 = 4; // `*~<&\\`: where a `_PIECE` may start
const SIGN: u8 = 8; // `:`, `=`, `|`
const DASH: u8 = 16; // `-`: `--` and `----begin`
const AT: u8 = 32; // `@`
const COLON: u8 = 64; // `:`: `://`

const fn classes() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let alnum = c.is_ascii_alphanumeric();
        let mut k = 0;
        if alnum || c == b'_' || c == b'-' || c == b'%' {
            k |= RUN;
        }
        if alnum || matches!(c, b'_' | b'-' | b'+' | b'/' | b'=') {
            k |= TOKEN;
        }
        if matches!(c, b'*' | b'~' | b'<' | b'&' | b'\\') {
            k |= PIECE;
        }
        if matches!(c, b':' | b'=' | b'|') {
            k |= SIGN;
        }
        if c == b'-' {
            k |= DASH;
        }
        if c == b'@' {
            k |= AT;
        }
        if c == b':' {
            k |= COLON;
        }
        t[b] = k;
        b += 1;
    }
    t
}

static CLASS: [u8; 256] = classes();

/// The letter's bit (lib.rs's `LETTER_BITS`: either case), 0 for any other byte.
const fn letter_bit(c: u8) -> u32 {
    LETTER_BITS[c as usize]
}

/// For the first letter of a prefilter word, the letters that may come second: pass pwd,
/// secret, token, key, auth, cred. One lookup passes over the rest of the alphabet's pairs.
const fn seconds() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = match c.to_ascii_lowercase() {
            b'p' => letter_bit(b'a') | letter_bit(b'w'),
            b's' | b'k' => letter_bit(b'e'),
            b't' => letter_bit(b'o'),
            b'a' => letter_bit(b'u'),
            b'c' => letter_bit(b'r'),
            _ => 0,
        };
        b += 1;
    }
    t
}

static SECONDS: [u32; 256] = seconds();

/// `_disguise._FOLD`: a character's folded form (`_disguise.fold_line`): None where it is kept
/// as it is, Some(None) where it is removed (`INVISIBLE`), Some(Some(letter)) for a look-alike
/// letter (`_LOOK_ALIKES`) or a fullwidth letter or digit. tests/engine/test_native_secrets.py
/// holds it to the Python table on every character.
fn folded(c: char) -> Option<Option<char>> {
    let removed = matches!(c,
        '\u{ad}' | '\u{34f}' | '\u{61c}' | '\u{115f}' | '\u{1160}' | '\u{17b4}' | '\u{17b5}' | '\u{180e}'
        | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206f}'
        | '\u{fe00}'..='\u{fe0f}' | '\u{feff}' | '\u{e0000}'..='\u{e007f}');
    if removed {
        return Some(None);
    }
    if matches!(c, '\u{ff10}'..='\u{ff19}' | '\u{ff21}'..='\u{ff3a}' | '\u{ff41}'..='\u{ff5a}') {
        return Some(char::from_u32(c as u32 - 0xfee0));
    }
    let letter = match c {
        '\u{261}' => 'g', '\u{391}' => 'A', '\u{392}' => 'B', '\u{395}' => 'E', '\u{396}' => 'Z',
        '\u{397}' => 'H', '\u{399}' => 'I', '\u{39a}' => 'K', '\u{39c}' => 'M', '\u{39d}' => 'N',
        '\u{39f}' => 'O', '\u{3a1}' => 'P', '\u{3a4}' => 'T', '\u{3a5}' => 'Y', '\u{3a7}' => 'X',
        '\u{3b1}' => 'a', '\u{3b5}' => 'e', '\u{3b9}' => 'i', '\u{3ba}' => 'k', '\u{3bd}' => 'v',
        '\u{3bf}' => 'o', '\u{3c1}' => 'p', '\u{3c2}' => 's', '\u{3c4}' => 't', '\u{3c5}' => 'u',
        '\u{3c7}' => 'x', '\u{3c9}' => 'w', '\u{405}' => 'S', '\u{406}' => 'I', '\u{408}' => 'J',
        '\u{410}' => 'A', '\u{412}' => 'B', '\u{415}' => 'E', '\u{41a}' => 'K', '\u{41c}' => 'M',
        '\u{41d}' => 'H', '\u{41e}' => 'O', '\u{420}' => 'P', '\u{421}' => 'C', '\u{422}' => 'T',
        '\u{423}' => 'Y', '\u{425}' => 'X', '\u{430}' => 'a', '\u{432}' => 'b', '\u{435}' => 'e',
        '\u{43a}' => 'k', '\u{43c}' => 'm', '\u{43d}' => 'h', '\u{43e}' => 'o', '\u{440}' => 'p',
        '\u{441}' => 'c', '\u{442}' => 't', '\u{443}' => 'y', '\u{445}' => 'x', '\u{455}' => 's',
        '\u{456}' => 'i', '\u{458}' => 'j', '\u{461}' => 'w', '\u{4ae}' => 'Y', '\u{4af}' => 'y',
        '\u{4ba}' => 'H', '\u{4bb}' => 'h', '\u{4cf}' => 'l', '\u{500}' => 'D', '\u{501}' => 'd',
        '\u{51a}' => 'Q', '\u{51b}' => 'q', '\u{51c}' => 'W', '\u{51d}' => 'w',
        _ => return None,
    };
    Some(Some(letter))
}

/// `_disguise.fold_line(line)[0]`.
fn fold(line: &str) -> String {
    line.chars().filter_map(|c| match folded(c) {
        None => Some(c),
        Some(kept) => kept,
    }).collect()
}

/// `fold` for the tests (tests/engine/test_native_secrets.py compares it with Python's).
#[pyfunction]
pub fn disguise_fold(line: &str) -> String {
    fold(line)
}

/// What a line that is not ASCII holds beyond ASCII: a character the disguise folds, a letter
/// that folds case to ASCII, a CJK prefilter word (`密` for 密码 and 密钥, `令` for 口令 and 令牌,
/// and the first characters of 秘钥 and 私钥) and a CJK sign (`：`, `是`, `为`). Only those
/// characters are decoded (from their lead bytes).
#[derive(Default)]
struct Wide {
    folds: bool,
    case: bool,
    word: bool,
    sign: bool,
}

fn wide(line: &str) -> Wide {
    let mut out = Wide::default();
    if line.is_ascii() {
        return out;
    }
    for (i, &c) in line.as_bytes().iter().enumerate() {
        if c >= 0xC0 {
            let ch = line[i..].chars().next().unwrap_or('\0');
            out.folds |= folded(ch).is_some();
            out.case |= folds_to_ascii(ch); // İ ı ſ K, which `str.lower` and `(?i)` take to ASCII
            out.word |= matches!(ch, '密' | '令' | '秘' | '私');
            out.sign |= matches!(ch, '：' | '是' | '为');
        }
    }
    out
}

const WORDS: [&[u8]; 7] = [b"pass", b"pwd", b"secret", b"token", b"key", b"auth", b"cred"];

/// Does the line hold a prefilter word, ASCII case ignored?
fn holds_word(b: &[u8]) -> bool {
    b.windows(2).enumerate().any(|(i, w)| {
        SECONDS[w[0] as usize] & letter_bit(w[1]) != 0
            && WORDS.iter().any(|word| b[i..].len() >= word.len() && b[i..i + word.len()].eq_ignore_ascii_case(word))
    })
}

/// The number of `TOKEN` bytes `b` ends with, and starts with after spaces and tabs.
fn token_tail(b: &[u8]) -> usize {
    b.iter().rev().take_while(|&&c| CLASS[c as usize] & TOKEN != 0).count()
}

fn token_head(b: &[u8]) -> usize {
    let from = b.iter().take_while(|&&c| c == b' ' || c == b'\t').count();
    b[from..].iter().take_while(|&&c| CLASS[c as usize] & TOKEN != 0).count()
}

/// Could one of `_markup._PIECE`'s alternatives match at `i` (`b[i]` is one of `*~<&\\`)? Each
/// test is its alternative's look-behind and a superset of what follows: for `*` and `~`, the
/// look-ahead after each count of repeats the alternative allows; for `<`, a tag's or a
/// comment's first character; for `&`, a reference's; for `\\`, an escape's look-behind alone.
fn piece_at(b: &[u8], i: usize) -> bool {
    let prev = if i > 0 { b[i - 1] } else { b'\n' };
    let token = |c: u8| CLASS[c as usize] & TOKEN != 0;
    let at = |j: usize| b.get(j).copied().unwrap_or(b'\n');
    // `c` then up to `extra` more, then one of `ahead`: the look-ahead tried after each count.
    let repeats = |c: u8, extra: usize, ahead: &dyn Fn(u8) -> bool| {
        (0..=extra).take_while(|&k| k == 0 || at(i + k) == c).any(|k| ahead(at(i + 1 + k)))
    };
    match b[i] {
        b'*' => (token(prev) || matches!(prev, b'~' | b'>' | b';'))
            && repeats(b'*', 2, &|n| token(n) || matches!(n, b'<' | b'~' | b'&' | b'\\')),
        b'~' => (token(prev) || matches!(prev, b'*' | b'>' | b';'))
            && repeats(b'~', 1, &|n| token(n) || matches!(n, b'<' | b'*' | b'&' | b'\\')),
        b'<' => (token(prev) || matches!(prev, b'*' | b'~' | b'>' | b';')) && (at(i + 1) == b'!' || tag_at(b, i + 1)),
        // `&#…;`, or a name of 2 to 32 letters and digits and `;`.
        b'&' => at(i + 1) == b'#' || (at(i + 1).is_ascii_alphabetic() && {
            let name = b[i + 1..].iter().take(33).take_while(|c| c.is_ascii_alphanumeric()).count();
            (2..=32).contains(&name) && at(i + 1 + name) == b';'
        }),
        // `\\` between a letter or digit and one of `_-+/=.:` before a letter or digit.
        _ => prev.is_ascii_alphanumeric() && matches!(at(i + 1), b'_' | b'-' | b'+' | b'/' | b'=' | b'.' | b':')
            && at(i + 2).is_ascii_alphanumeric(),
    }
}

/// `_markup._INLINE_TAGS`.
const INLINE_TAGS: [&[u8]; 29] = [
    b"a", b"abbr", b"b", b"bdi", b"bdo", b"cite", b"code", b"data", b"del", b"dfn", b"em", b"font", b"i", b"ins",
    b"kbd", b"mark", b"s", b"samp", b"small", b"span", b"strike", b"strong", b"sub", b"sup", b"time", b"tt", b"u",
    b"var", b"wbr",
];

/// Could an inline tag of `_PIECE` start at `j` (after its `<`)? An optional `/`, then a run
/// of letters that is one of the tag names in any ASCII case, then a space, a tab, `/` or `>`.
fn tag_at(b: &[u8], j: usize) -> bool {
    let from = if b.get(j) == Some(&b'/') { j + 1 } else { j };
    let name = b[from.min(b.len())..].iter().take_while(|c| c.is_ascii_alphabetic()).count();
    let after = b.get(from + name).copied().unwrap_or(b'\n');
    name > 0
        && matches!(after, b' ' | b'\t' | b'/' | b'>')
        && INLINE_TAGS.iter().any(|t| t.eq_ignore_ascii_case(&b[from..from + name]))
}

/// The doors `secret_doors_lines` names, one bit each (docs/native.md, "The PM401 verdict"): which
/// parts of `find_secrets` can find anything in a text. The verdict is "no bit but `FOLDS`".
pub const PLAIN: u8 = 1; // a line's own doors: a run, a private key's header, a URL, a named value
pub const FOLDS: u8 = 2; // a character the disguise folds: `_disguise.fold` is not None
pub const MARKUP: u8 = 4; // a `_markup._PIECE` may start, on a line or on its folded form
pub const JOIN: u8 = 8; // a token may be cut over two lines: `_disguise.joins` may find one
pub const CASE: u8 = 16; // a letter Python's case folding takes to ASCII: the whole scan runs
pub const FOLDED: u8 = 32; // a folded line's own doors
pub const EVERY: u8 = PLAIN | FOLDS | MARKUP | JOIN | CASE | FOLDED; // a line the core does not read
// Not a door of its own: set with `PLAIN` where a line opens it by a run, a private key's header
// or a URL, so that `PLAIN` without it means the named door alone (`secret_doors_lines` returns
// it: the plain scan then needs no gate).
pub const SHAPED: u8 = 64;

/// One line's doors (`PLAIN`, `FOLDS`, `MARKUP`, `CASE`, `FOLDED`).
fn line_mask(line: &str) -> u8 {
    let wide = wide(line);
    if wide.case {
        return CASE;
    }
    let mut mask = line_doors(line, &wide);
    // The scan reads the folded line too (`find_secrets`: the disguised view, and the rendered
    // view of that): its doors count as well. A folded line folds no further.
    // (Folding changes no CJK word or sign: `wide` holds for both.)
    if wide.folds {
        let folded = line_doors(&fold(line), &wide);
        mask |= FOLDS | (folded & MARKUP) | if folded & PLAIN != 0 { FOLDED } else { 0 };
    }
    mask
}

/// The doors of one line as it is (`PLAIN`, `MARKUP`), its `wide` characters known. One pass
/// without a branch keeps the run's length and gathers the classes of the line's bytes; only
/// the doors whose bytes are there are looked at again.
fn line_doors(line: &str, wide: &Wide) -> u8 {
    let b = line.as_bytes();
    let (mut run, mut long, mut classes) = (0usize, false, 0u8);
    for &c in b {
        let k = CLASS[c as usize];
        run = (run + 1) & 0usize.wrapping_sub((k & RUN) as usize); // 0 after a byte of no run
        long |= run >= 20;
        classes |= k;
    }
    let mut mask = 0;
    if classes & PIECE != 0 && (0..b.len()).any(|i| CLASS[b[i] as usize] & PIECE != 0 && piece_at(b, i)) {
        mask |= MARKUP;
    }
    if long {
        return mask | PLAIN | SHAPED;
    }
    let dashes = classes & DASH != 0 && line.contains("--");
    // `_pem._BEGIN`: four or five dashes, then BEGIN in any case (every place of four dashes:
    // five hold two).
    if dashes && b.windows(9).any(|w| w[..4] == *b"----" && w[4..].eq_ignore_ascii_case(b"begin")) {
        return mask | PLAIN | SHAPED;
    }
    // A credential in a URL: `find_url_credentials` reads the lines holding both.
    if classes & AT != 0 && classes & COLON != 0 && line.contains("://") {
        return mask | PLAIN | SHAPED;
    }
    // PuTTY's header (`PuTTY-User-Key-File-2:`) holds `Key` and `:`: shut here too.
    let signed = wide.sign || classes & SIGN != 0 || dashes || line.contains(" is ") || line.contains(" are ");
    if signed && (wide.word || holds_word(b)) {
        mask |= PLAIN;
    }
    mask
}

/// The doors open in a text given as its lines (as `split_lines` gives them: none holds a line
/// break). `first`: stop at the first door that voids the verdict (only `clear` is asked).
pub fn doors(lines: &[&str], first: bool) -> u8 {
    doors_of(lines, first, None)
}

/// `doors`, and in `plain` the lines that open `PLAIN` (by a run, a private key's header, a URL
/// or a named value; a line that opens it otherwise than by a named value sets `SHAPED`).
fn doors_of(lines: &[&str], first: bool, mut plain: Option<&mut Vec<u32>>) -> u8 {
    let mut mask = 0;
    let mut tail = 0usize; // the previous line's `token_tail`
    for (i, line) in lines.iter().enumerate() {
        let own = line_mask(line);
        if own & PLAIN != 0 {
            if let Some(plain) = plain.as_deref_mut() {
                plain.push(i as u32);
            }
        }
        mask |= own;
        let b = line.as_bytes();
        let head = token_head(b);
        if tail >= 4 && head >= 4 && tail + head >= 20 {
            mask |= JOIN;
        }
        if first && mask & !FOLDS != 0 {
            return mask;
        }
        tail = token_tail(b);
    }
    mask
}

/// The verdict on a text given as its lines: True where PM401 finds nothing in them, whatever
/// the settings (a folded character alone opens no door).
pub fn clear(lines: &[&str]) -> bool {
    clear_by(doors(lines, true))
}

/// The verdict of `doors` already found (`doors_lines`).
pub fn clear_by(doors: u8) -> bool {
    doors & !FOLDS == 0
}

/// The lines as UTF-8 views, or None where one holds a line break (`find_secrets` reads it as
/// a space) or a lone surrogate: the core does not read those.
fn views<'a>(held: &'a [Bound<'_, PyString>]) -> Option<Vec<&'a str>> {
    let mut strs: Vec<&str> = Vec::with_capacity(held.len());
    for s in held {
        match s.to_str() {
            Ok(line) if !line.contains('\n') && !line.contains('\r') => strs.push(line),
            _ => return None,
        }
    }
    Some(strs)
}

/// `doors` for Python's lines (the bits above, every one of them for lines it does not read:
/// `find_secrets(..., doors=)` runs only the parts of the scan behind an open door, and `SHAPED`
/// where a line opens `PLAIN` by a run, a private key's header or a URL), and without `CASE`
/// the lines that open `PLAIN`: the plain scan can find nothing elsewhere
/// (`find_secrets(..., plain_lines=)` reads only those lines, and without `SHAPED` only their
/// prefilter words, skipping the gate; docs/native.md). None with `CASE`.
#[pyfunction]
pub fn secret_doors_lines(lines: &Bound<'_, PyList>) -> PyResult<(u8, Option<Vec<u32>>)> {
    let held: Vec<Bound<'_, PyString>> = lines.iter().map(|item| item.cast_into::<PyString>()).collect::<Result<_, _>>()?;
    Ok(views(&held).map_or((EVERY, None), |strs| doors_lines(&strs)))
}

/// `secret_doors_lines` of lines the core reads (also the record's, `file_record`).
pub fn doors_lines(lines: &[&str]) -> (u8, Option<Vec<u32>>) {
    let mut plain = Vec::new();
    let mask = doors_of(lines, false, Some(&mut plain));
    let shaped = if mask & PLAIN != 0 { mask & SHAPED } else { 0 };
    ((mask & EVERY) | shaped, if mask & CASE == 0 { Some(plain) } else { None })
}

/// `clear` for Python's lines (a file's lines, or `[path]` for a file's name). False for a line
/// holding a line break (`find_secrets` reads it as a space) or a lone surrogate.
#[pyfunction]
pub fn secrets_clear(lines: &Bound<'_, PyList>) -> PyResult<bool> {
    // The strings held first, so that their UTF-8 views below live as long as the check.
    let held: Vec<Bound<'_, PyString>> = lines.iter().map(|item| item.cast_into::<PyString>()).collect::<Result<_, _>>()?;
    Ok(views(&held).is_some_and(|strs| clear(&strs)))
}
