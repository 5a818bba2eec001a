"""Value checks shared by the PM401 rules: does a candidate look like key material, or like a
placeholder, an identifier, a path, a hash, a version or a word?

Every function takes the candidate value and returns a bool; none of them keeps, logs or
raises with the value.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache

# Values that say they are not real: AWS's documented example keys end in EXAMPLE / EXAMPLEKEY
# (and its docs append "example" to made-up values: `asdf34example`), docs use "sample",
# "dummy", "fake", "placeholder", "your…", "redacted". These words disown the value, so they
# count anywhere in it, in a password as in a token body. Words of five letters or more are
# looked up case-insensitively (a random body spells one with odds below 1e-7); the
# four-letter ones need a case-consistent spelling and a boundary.
_EXAMPLE_LONG = ("example", "placeholder", "redacted", "changeme", "change_me", "change-me", "replaceme",
                 "replace_me", "replace-me", "insert_here", "insert-here", "sample", "dummy")
_EXAMPLE_SHORT = re.compile(r"YOUR|FAKE|(?<![A-Za-z])(?:[Yy]our|[Ff]ake|[Nn]one|NONE|[Nn]ull|NULL)(?![a-z])")
# Template and code references: ${VAR}, $VAR, {{ var }}, {var}, <your-key>, %(x)s, %s, os.environ[…],
# process.env.X, getenv(…), vault(…) … `_TEMPLATE_AT` is matched at the start only;
# `_TEMPLATE_IN` is searched once one of `_TEMPLATE_HINTS` is present.
_TEMPLATE_AT = re.compile(
    r"\$[A-Za-z_]\w*$|<.*>$|\[.*\]$|%[sd]$|\$\d$|[\{\[\(]|"
    r"[A-Za-z_$][\w.$]*\s*[\(\[].*[\)\]]$|(?:[a-z_$]{3,}|[a-z]+(?:[A-Z][a-z0-9]+)+|[A-Z][a-z]+(?:[A-Z][a-z0-9]+)*)[\(\[]|"
    r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+[\(\[]"
)
_TEMPLATE_HINTS = ("${", "$(", "{{", "}}", "{%", "%(", "env", "secrets.", "}")
_TEMPLATE_IN = re.compile(
    r"\$\{|\$\(|\{\{|\}\}|\{%|%\(\w+\)[sd]|process\.env\.|os\.environ|getenv|secrets\.|\benv\(|\{[A-Za-z_][\w.]*\}"
)
# Words that name what a value is. A random body never spells one, so in key material (a
# shaped token's body) one anywhere marks a placeholder. A value a person chose may hold one
# (`MySecretPass99`, `Hunter2SuperSecret!`): there it marks a name, not a value, only when the
# value does not look chosen (`_looks_chosen`): `_TokenType`, `V1SecretVolumeSource`,
# `CLOUDSDK_PROXY_PASSWORD_value`, `my-Bitbucket-password`, `webdavgeneratedpassword1`.
_NAMES_ITSELF = ("password", "passwd", "secret", "apikey", "api_key", "token")
# Symbols people add to a password to make it strong; not the separators and syntax of names,
# paths, format strings and URLs (`_ - . / : , ' " = % + ( )`).
_CHOSEN_SYMBOLS = frozenset("!#$&*?@^~")
_DIGIT_ON_WORD = re.compile(r"[a-z]\d")
_ENV_NAME = re.compile(r"[A-Z][A-Z_]*\d{0,3}")
_RUN_OF_SAME = re.compile(r"(.)\1{5,}")  # xxxxxx, ******, 000000
_MASKED = ("***", "•", "…", "...")  # sk-abc***xyz, ••••, ghp_12…
_SEQUENCES = ("abcdefgh", "bcdefghi", "12345678", "23456789", "01234567", "4567890", "qwertyui", "a1b2c3",
              "abc123", "123abc", "abcd1234", "1234abcd", "uvwxyz", "vwxyz")
# Placeholders that say what goes there: `replace_with_your_key`, `^PASS^` (a tool's
# substitution mark, as in hydra), `%PASSWORD%`, `@@TOKEN@@`, `__SECRET__`, and a value whose
# tail was blanked out with x's (`AIza…XXX`, `NZ8KJ9xxxx`).
_FILL_IN = re.compile(
    r"(?:replace|insert|enter|put|paste|add|fill)[-_ ]?(?:with|in|here|your)|"
    r"([\^%@#]{1,2}|__)[A-Z][A-Z0-9_]*\1", re.IGNORECASE)
_BLANKED_TAIL = re.compile(r"(?:xxx|XXX)[xX]*$")

# Placeholder words, compared after lowering and undoing common leetspeak and dropping
# digits and symbols: "P@ssw0rd1!" → "password".
_PLACEHOLDER_WORDS = frozenset(
    "password passwd pass pwd secret token apikey key mypassword yourpassword changeme "
    "letmein admin root test tests testing qwerty default hunter xxx xxxx abc abcd none null "
    "todo tbd foo bar foobar baz value string redacted hidden masked omitted removed "
    "example sample dummy fake placeholder secretkey mysecret supersecret topsecret "
    "accesstoken accesskey authtoken privatekey clientsecret".split()
)
# Words a value made only of words and separators may be built from and still be a
# placeholder: "your_secret_here", "Your-API-Key", "Insert_Token_Here", "Db_Password".
_PLACEHOLDER_PARTS = _PLACEHOLDER_WORDS | frozenset(
    "your my our the a an here goes put paste insert enter replace me change fill add use with real "
    "actual own this that to of for in new api access auth client private secret secrets key keys "
    "token tokens password passwords passphrase pass passwd pwd credential credentials cred creds "
    "value text db database user app service account bot session signing encryption master "
    "generated example sample dummy fake placeholder redacted xxxxx xxxxxx".split()
)
_MAX_PART = max(map(len, _PLACEHOLDER_PARTS))
_WORDS_AND_SEPARATORS = re.compile(r"[-_. /]*[A-Za-z]+(?:[-_. /]+[A-Za-z]+)*[-_. /]*")
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_LEET = str.maketrans({"@": "a", "4": "a", "0": "o", "1": "i", "3": "e", "$": "s", "5": "s", "7": "t", "!": "i"})


_CLOG2C = [0.0] + [c * math.log2(c) for c in range(1, 1025)]


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(value)
    if n == 0:
        return 0.0
    if n >= len(_CLOG2C):
        return -sum(c / n * math.log2(c / n) for c in _char_counts(value))
    # H = log2(n) - Σ c·log2(c) / n, with c·log2(c) from a table.
    return math.log2(n) - sum(map(_CLOG2C.__getitem__, _char_counts(value))) / n


@lru_cache(maxsize=64)
def _char_counts(value: str) -> tuple[int, ...]:
    """How often each character of `value` occurs, in the order they first occur. Kept for
    the few values in hand: `is_placeholder` and `entropy` both count a value `looks_random`
    judges (a Counter of a key costs a few µs, the lookup a tenth of one)."""
    return tuple(Counter(value).values())


def is_example(value: str) -> bool:
    low = value.lower()
    return any(w in low for w in _EXAMPLE_LONG) or _EXAMPLE_SHORT.search(value) is not None


def _looks_chosen(value: str) -> bool:
    """Does a value look like a password a person made strong, rather than a name? It holds
    one of `_CHOSEN_SYMBOLS`, or it mixes cases and puts digits on a word (`Hunter2…`,
    `…Pass99`: a digit after a lowercase letter; `V1SecretVolumeSource`, `OAUTH2_SECRET`,
    `webdavgeneratedpassword1` are names)."""
    if any(c in _CHOSEN_SYMBOLS for c in value):
        return True
    return value.lower() != value and value.upper() != value and _DIGIT_ON_WORD.search(value) is not None


def names_itself(value: str) -> bool:
    """A word naming what the value is, in a value that does not look chosen (see above)."""
    low = value.lower()
    return any(w in low for w in _NAMES_ITSELF) and not _looks_chosen(value)


def has_marker(value: str) -> bool:
    """For key material (a shaped token's random body): a word naming what it is anywhere,
    whatever else the body holds, on top of `is_placeholder`."""
    low = value.lower()
    return any(w in low for w in _NAMES_ITSELF)


# A format verb standing alone in the value (`%v@tcp(%s)`, `%-10s`, `%08x`, `{}`, `{0}`): the
# value is a format string a program fills in (Go's `Printf("user:%v,pwd:%v")`, C, Python),
# not a value. Standing alone: at the start or after a character that is not a letter or a
# digit, and followed by one that is not either, so that a random `…k%dQ…` is not one.
_FORMAT_VERB = re.compile(
    r"(?:^|(?<=[^A-Za-z0-9]))(?:%[-+ #0]*\d*(?:\.\d+)?[vsdqxXfegTtpbcoU]|\{\d*\})(?![A-Za-z0-9])")


def has_format_verb(value: str) -> bool:
    return ("%" in value or "{" in value) and _FORMAT_VERB.search(value) is not None


def is_template(value: str) -> bool:
    """A template, variable, format string or code reference rather than a value."""
    return _TEMPLATE_AT.match(value) is not None or has_format_verb(value) or (
        any(h in value for h in _TEMPLATE_HINTS) and _TEMPLATE_IN.search(value) is not None
    )


def _splits_into_parts(word: str) -> bool:
    """Can a lowercase word be cut into placeholder parts ("yoursecrethere" → your secret here)?"""
    n = len(word)
    if n > 64:
        return False
    ok = [True] + [False] * n
    for i in range(1, n + 1):
        for j in range(max(0, i - _MAX_PART), i):
            if ok[j] and word[j:i] in _PLACEHOLDER_PARTS:
                ok[i] = True
                break
    return ok[n]


def made_of_placeholder_words(value: str) -> bool:
    """Only letters and separators, every word a placeholder part: `your_secret_here`,
    `Your-API-Key`, `insert token here`, `Access_Key_Value` — not `MySecretPass99`."""
    if _WORDS_AND_SEPARATORS.fullmatch(value) is None:
        return False
    return all(w.lower() in _PLACEHOLDER_PARTS or _splits_into_parts(w.lower()) for w in _WORD.findall(value))


def is_placeholder(value: str) -> bool:
    """Masked, templated, repeated, sequential, example or placeholder values. A placeholder
    word (`password`, `secret`, `test`, `key`…) makes one only as the whole value (`P@ssw0rd1!`,
    `hunter2`, `changeme`) or with other such words and separators (`your_secret_here`), not
    among other characters (`MySecretPass99`, `Xk9#testPass2024!`); a word naming what the value
    is also in a name (`names_itself`). Example words count anywhere (`is_example`)."""
    if not value or is_template(value) or any(m in value for m in _MASKED):
        return True
    if is_example(value) or _FILL_IN.match(value) or _BLANKED_TAIL.search(value):
        return True
    low = value.lower()
    if _mostly_sequences(low) or names_itself(value):
        return True
    n = len(value)
    if n <= 24 and _is_placeholder_word(low):
        return True
    if made_of_placeholder_words(value):
        return True
    top = max(_char_counts(value))
    # One character making up a large share of a long value (xxxx-xxxx-1234, 0000…), or a run.
    if (n >= 10 and top / n > 0.4) or (top >= 6 and _RUN_OF_SAME.search(value)):
        return True
    return False


def _mostly_sequences(low: str) -> bool:
    """Is most of the value (three fifths) keyboard or counting sequences — `abc123`,
    `abcd1234efgh`, the alphabet — judged on the whole value? A sequence inside a long random
    token (`…Qa1b2c3Zr…` in 36 characters) is chance, not a placeholder (issue 43)."""
    if _counts_up(low):
        return True
    if not any(seq in low for seq in _SEQUENCES) and not _ASCENDING.search(low):
        return False
    covered = bytearray(len(low))
    for seq in _SEQUENCES:
        start = low.find(seq)
        while start != -1:
            covered[start:start + len(seq)] = b"\1" * len(seq)
            start = low.find(seq, start + 1)
    for m in _ASCENDING.finditer(low):
        covered[m.start():m.end()] = b"\1" * (m.end() - m.start())
    return sum(covered) * 5 >= len(low) * 3


def _counts_up(low: str) -> bool:
    """Its letters and its digits, each read apart, count up (`a1b2c3`, `qr6stu789vwxyz`):
    four fifths of the neighbouring pairs one apart, in a value of six or more of them."""
    # `low` is lowered: its ASCII letters are a-z. Counted as misses, so that a random value
    # stops at the second pair out of step rather than reading every pair (this runs on every
    # value after a key).
    letters, digits = _NOT_LOWER.sub("", low), _NOT_DIGIT.sub("", low)
    pairs = max(len(letters) - 1, 0) + max(len(digits) - 1, 0)
    if pairs < 5:
        return False
    allowed = pairs // 5  # ups * 5 >= pairs * 4, i.e. misses * 5 <= pairs
    misses = 0
    for chars in (letters, digits):
        for a, b in zip(chars, chars[1:], strict=False):
            if ord(b) - ord(a) != 1:
                misses += 1
                if misses > allowed:
                    return False
    return sum(c.isalnum() for c in low) * 5 >= len(low) * 4


def _ascending_runs() -> re.Pattern[str]:
    """Runs of five or more characters each one after the last (`lmnop`, `56789`)."""
    runs = ["".join(chr(c + i) for i in range(5)) for c in range(ord("a"), ord("z") - 3)]
    runs += ["".join(str(d + i) for i in range(5)) for d in range(0, 6)]
    return re.compile("(?:" + "|".join(runs) + ")+")


_ASCENDING = _ascending_runs()


_NOT_LOWER = re.compile(r"[^a-z]+")
_NOT_DIGIT = re.compile(r"[^0-9]+")


def _letters(low: str) -> str:
    return _NOT_LOWER.sub("", low)


_PADDING = "0123456789!?#*."


def _is_placeholder_word(low: str) -> bool:
    """A placeholder word once digits and symbols are dropped ("hunter2"), leetspeak undone
    ("p@ssw0rd"), or both, the padding around it dropped first ("p@ssw0rd1!": the 1 is padding,
    not an i)."""
    return (
        _letters(low) in _PLACEHOLDER_WORDS
        or _letters(low.translate(_LEET)) in _PLACEHOLDER_WORDS
        or _letters(low.strip(_PADDING).translate(_LEET)) in _PLACEHOLDER_WORDS
    )


# A URL's password that is a placeholder in the shapes documentation writes: a word and a short
# digit run (`key_1234`, `pass1234`, `secret123`, `demo2024`), a short number (`1234`, `123456`),
# a run of x's or stars, a blanked tail (`key_xxxxxxxx`). The URL proves a credential goes
# there, not that this one is one (docs/decisions.md, "Secrets: placeholders in a URL's
# password").
_WORD_AND_DIGITS = re.compile(r"(?:[a-z]{1,16}|[A-Z][a-z]{0,15}|[A-Z]{1,16})[-_.]?\d{1,4}")
_DIGITS_ONLY = re.compile(r"\d{1,8}")


def _digit_sequence(digits: str) -> bool:
    """Each digit one more, one less than the last or the same (`1234`, `4321`, `0000`), or a
    run that repeats at least twice, the last time cut short or not (`1212`, `123123`, `01010`).
    A repeat is looked for in a short value only (`_REPEAT_MAX`): each length tried builds the
    value again, and an agent's megabyte of digits in a URL must stay linear."""
    steps = {(ord(b) - ord(a)) % 10 for a, b in zip(digits, digits[1:], strict=False)}
    if len(steps) <= 1:
        return True
    n = len(digits)
    return n <= _REPEAT_MAX and any(digits == (digits[:k] * (n // k + 1))[:n] for k in range(1, n // 2 + 1))


_REPEAT_MAX = 32  # digits: longer than any placeholder a document writes


def url_password_placeholder(pw: str) -> bool:
    """A URL's password that is no credential at all: a placeholder by `is_placeholder`
    (masked, templated, a run of x's, a blanked tail, a placeholder word with digits around it:
    `pass1234`, `key_1234`, `secret123`), or a digit sequence (`1234`, `123456`, `0000`)."""
    if is_placeholder(pw):
        return True
    return pw.isascii() and pw.isdigit() and _digit_sequence(pw)


def url_password_weak(pw: str) -> bool:
    """A URL's password that could be a placeholder or a person's weak choice, which the text
    does not tell apart: a single-case word and at most four digits (`tiger123`, `Hello2024`),
    or a number of at most eight digits (`4829`). A finding, but of weak evidence."""
    if not pw.isascii():
        return False
    return _WORD_AND_DIGITS.fullmatch(pw) is not None or _DIGITS_ONLY.fullmatch(pw) is not None


def token_body_ok(body: str) -> bool:
    """For a value in a known token format: the random part must not be a placeholder and must
    carry some entropy. Loose enough that every random token passes."""
    if is_placeholder(body) or has_marker(body):
        return False
    n = len(body)
    return entropy(body) >= min(3.0, 0.6 * math.log2(max(n, 2)))


# UUID-shaped (8-4-4-4-12, allowing a typo'd group): ids, client and idempotency tokens.
_UUID = re.compile(r"[0-9a-zA-Z]{7,9}-[0-9a-zA-Z]{4}-[0-9a-zA-Z]{4}-[0-9a-zA-Z]{4}-[0-9a-zA-Z]{12}")
_VERSION = re.compile(r"[vV]?\d+(?:[._]\d+)+[0-9A-Za-z]*(?:[-+._][0-9A-Za-z]+)*", re.ASCII)
_DATEISH = re.compile(r"[\d\-/:.T+Z ]+")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}")
_PATH = re.compile(r"(?:~|\.{1,2})?(?:/[\w.\-@]+)+/?|[A-Za-z]:\\.*|\\\\.*")
_FILE_EXT = re.compile(
    r"/[\w.\-]+\.(?:md|txt|json|ya?ml|toml|ini|env|pem|key|crt|cfg|conf|py|js|ts|sh|log|gpg|age|kdbx|p12|pfx)$")
_NAMED_HASH = re.compile(r"(?:sha(?:1|224|256|384|512)|md5|blake2b?|sha3-\d+)[:\-=]", re.IGNORECASE)
_IDENT_LOWER = re.compile(r"(?:[a-z]+\d*|\d+)(?:[-_.](?:[a-z]+\d*|\d+))+")
_IDENT_UPPER = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
# A member access chain, with C#/TypeScript null-conditional and non-null steps
# (`ctx.Params.Meta?.ProgressToken`, `session!.user.token`).
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:[?!]?\.[A-Za-z_]\w*)+")
_CAMEL = re.compile(r"[A-Za-z][a-z]*(?:[A-Z][a-z]+)*")  # each group starts upper: no backtracking blow-up
_ASCII_VALUE = re.compile(r"[!-~]+")
_OPTION = re.compile(r"--?[A-Za-z][a-z0-9]*(?:-[a-z0-9]+)*(?:=[\w./-]*)?")


_WORD_PART = re.compile(r"[A-Za-z\u00c0-\u024f]+\d{0,4}|\d+")
_PART_SEPARATORS = re.compile(r"[-_/.#:+&]+")


def wordy(value: str) -> bool:
    """Made of two or more words joined by separators (`all-green-after/retry2`, `Test_Run#42`,
    `Reisepass-Nr/2024`), each a run of letters in one case pattern with at most a few digits
    after it — how prose and names are built, not passwords (`Xk9#mPq2vL`)."""
    parts = [p for p in _PART_SEPARATORS.split(value) if p]
    if len(parts) < 2:
        return False  # one word with digits (`buxinren123`) is how people make passwords
    for part in parts:
        if _WORD_PART.fullmatch(part) is None:
            return False
        letters = part.rstrip("0123456789")
        if letters and not (letters.islower() or letters.isupper() or letters.istitle()):
            return False
    return True


# Code, not a value: a call, a member or scope access, an index, a variable of a template
# language — `Hash::make($request->password)`, `$user->createToken('api')`, `Str::random(16)`,
# `bin2hex(random_bytes(32))`, `config['jwt']`, `@db_pass` (a deployment tool's secret
# reference), `{{ .Values.token }}`. A chain of identifiers followed by `(`, `[`, `::`, `->`.
_CODE_CHAIN = re.compile(
    r"[$@]?[A-Za-z_][\w$]*(?:(?:\.|->|::|\?\.)[A-Za-z_$][\w$]*)*(?P<op>\(|\[|::|->)")
# Ruby's safe navigation (`proxy_uri&.password`), a build tool's filter placeholder (Maven's
# and Gradle's `@dataSource.password@`, filled in from a properties file), and Go's address of a composite literal
# (`&MaxPass{}`, `&cfg.Pass`): member access and construction, not a value.
_REFERENCE = re.compile(
    r"@[A-Za-z_][\w.-]*@?|\$[A-Za-z_][\w]*(?:->|\.)[\w>.-]+|[A-Za-z_]\w*(?:&\.[A-Za-z_]\w*)+[?!]?|"
    r"&[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|&[A-Za-z_][\w.]*\{.*\}")
# A password hash in crypt format (bcrypt `$2b$10$…`, sha512-crypt `$6$…`, argon2, scrypt):
# what a database keeps instead of the password, not the password.
_CRYPT_HASH = re.compile(r"\$(?:2[abxy]?|1|5|6|y|gy|7|argon2(?:id|i|d)|scrypt|pbkdf2[\w-]*|sha\d+)\$")


# A PowerShell command (`ConvertTo-SecureString $plain -AsPlainText -Force`, `New-Object
# System.Management.Automation.PSCredential(…)`, `Get-Secret -Name db`): an approved verb
# (the language's fixed list, `Get-Verb`), a dash and a noun of letters. What it returns is
# assigned, not the text. A noun with digits stays a value (`Test-Pass123`).
_CMDLET = re.compile(
    r"(?:Add|Approve|Assert|Backup|Block|Build|Checkpoint|Clear|Close|Compare|Complete|Compress|Confirm|"
    r"Connect|Convert|ConvertFrom|ConvertTo|Copy|Debug|Deny|Deploy|Disable|Disconnect|Dismount|Edit|Enable|"
    r"Enter|Exit|Expand|Export|Find|Format|Get|Grant|Group|Hide|Import|Initialize|Install|Invoke|Join|Limit|"
    r"Lock|Measure|Merge|Mount|Move|New|Open|Optimize|Out|Ping|Pop|Protect|Publish|Push|Read|Receive|Redo|"
    r"Register|Remove|Rename|Repair|Request|Reset|Resize|Resolve|Restart|Restore|Resume|Revoke|Save|Search|"
    r"Select|Send|Set|Show|Skip|Split|Start|Step|Stop|Submit|Suspend|Switch|Sync|Test|Trace|Unblock|Undo|"
    r"Uninstall|Unlock|Unprotect|Unpublish|Unregister|Update|Use|Wait|Watch|Write)-[A-Z][A-Za-z]+")
# A reference in a scheme: Salesforce's Named Credential (`callout:External_API`), `vault:secret/db`,
# `secret:prod_db`, `env:DB_PASSWORD`. The name after the colon reads as a name: words joined
# by separators (`wordy`) or one CamelCase word, not `admin:S3cr3tP4ss` (a user and a password).
_SCHEME_REF = re.compile(r"[a-z][a-z0-9+.\-]{1,20}:(?P<name>[A-Za-z_][\w.\-/]*)")


def names_a_thing(value: str) -> bool:
    """A reference to something kept elsewhere, written as its name: a scheme and a name
    (`callout:External_API`), or words joined by slashes (a design token `Desktop/Title/H1`, a
    path of words `Shared/Team/Prod`), whose parts a person reads, unlike base64's."""
    m = _SCHEME_REF.fullmatch(value)
    if m is not None:
        name = m.group("name").strip("_")
        return bool(name) and (wordy(name) or _CAMEL.fullmatch(name) is not None)
    return "/" in value and wordy(value)


_NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _random_part(chain: str) -> bool:
    """A part of a dotted chain that no one would name a member: more than a third of its four
    or more words one or two characters long (`i0VpEBOWfb` in `i0VpEBOWfb.ZAVaBSo63bbH6x`,
    `@GK032w6AsfFjrLWU`), where names hold words (`ctx`, `ProgressToken`, `PSCredential`, `H1`)."""
    for part in re.split(r"[?!]?\.", chain):
        words = _NAME_WORD.findall(part)
        if len(words) >= 4 and sum(len(w) <= 2 for w in words) * 3 > len(words):
            return True
    return False


def is_code_expression(value: str) -> bool:
    """A code expression assigned to a secret-named variable rather than a value."""
    if _CMDLET.fullmatch(value) is not None:
        return True
    m = _CODE_CHAIN.match(value)
    if m is not None:
        chain = value[:m.start("op")]
        # `ident(` alone needs its `)` in the value too: `Xk9(…` is a password, `str(x)` code.
        if m.group("op") in ("::", "->") or any(sep in chain for sep in (".", "->", "::")):
            return True
        if ")" in value[m.end():] or "]" in value[m.end():] or m.end() == len(value):
            return len(chain.lstrip("$@")) >= 2
    if _REFERENCE.fullmatch(value) is None:
        return False
    # `@db_pass`, `@dataSource.password@` name something; `@i0VpEBOWfbZAVaBS` is a password.
    return not (value.startswith("@") and _random_part(value.strip("@")))


def _random_segment(path: str) -> bool:
    """A base64 value can start with "/" and hold more: a path's segments are not random."""
    for seg in re.split(r"[/\\]", path):
        if len(seg) >= 16 and any(c.isupper() for c in seg) and any(c.islower() for c in seg) and any(
            c.isdigit() for c in seg
        ):
            return True
    return False


def refused_at_once(value: str) -> bool:
    """The refusals of `looks_random` that cost a few tests: a value of one of these shapes is
    never random, whatever the rest of it says. Most values after a key are one (`Bearer`,
    `Status`, `$API_KEY`, `env.token`, `<your-api-key>`, `${TOKEN}`), while `is_placeholder`
    costs tens of µs on a word (its sequences and splits): they come first, here and in
    `find_assignments`, which asks before it reads the key."""
    n = len(value)
    if n < 8 or n > 512 or _ASCII_VALUE.fullmatch(value) is None:
        return True
    if value.isalpha() and n < 16:
        return True  # letters only, too short to be random: `looks_random`'s letters-only branch
    if _ENV_NAME.fullmatch(value) or _IDENT_LOWER.fullmatch(value) or _IDENT_UPPER.fullmatch(value):
        return True
    if "://" in value or "`" in value or value.startswith(("data:", "mailto:", "file:", "arn:", "urn:")):
        return True
    return is_template(value)  # `is_placeholder`'s first refusal


def looks_random(value: str) -> bool:
    """For a value found after a secret-ish key (`password:`, `api_key =`, `令牌：`): does it look
    like a password or key rather than a word, a reference, a path or a placeholder?"""
    if refused_at_once(value) or is_placeholder(value):
        return False
    n = len(value)
    if _NAMED_HASH.match(value) or _CRYPT_HASH.match(value) or is_code_expression(value) or names_a_thing(value):
        return False
    if _EMAIL.fullmatch(value) or _VERSION.fullmatch(value) or _DATEISH.fullmatch(value) or _UUID.fullmatch(value):
        return False
    if (_PATH.fullmatch(value) and not _random_segment(value)) or _FILE_EXT.search(value):
        return False
    if _DOTTED.fullmatch(value) and not _random_part(value):
        return False
    if value.startswith("-") and _OPTION.fullmatch(value):
        return False  # a command-line option (`--no-verify`, `-rf`), not a value
    core = value.strip("!\"#%&'()*+,-./:;<=>?@[\\]^_`{|}~")
    if core.isalpha() and (core.islower() or core.isupper() or core.istitle()):
        return False  # a word with punctuation around it
    lower = any(c.islower() for c in value)
    upper = any(c.isupper() for c in value)
    digit = any(c.isdigit() for c in value)
    symbol = any(not c.isalnum() for c in value)
    if not (lower or upper):
        # Digits and symbols only: a number, a date, a phone number — unless long and varied.
        return n >= 16 and not _DATEISH.fullmatch(value) and entropy(value) >= 3.0
    if not (digit or symbol):
        # Letters only: a word or CamelCase name, unless long and mixed like base62.
        if _CAMEL.fullmatch(value) or not (lower and upper):
            return False
        return n >= 16 and entropy(value) >= 3.5
    ent = entropy(value)
    need = min(3.0, 0.7 * math.log2(n))
    return ent >= need
