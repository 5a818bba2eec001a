"""Rules for secrets with a documented shape: a literal prefix and a random body. Each rule is
tried only on candidate lines (a run of 20 token characters, see `find_secrets`) that contain
one of its keywords: short case-sensitive literals shared by a family ("gh", "sk-", "gl").

Written from the providers' documented token formats. Where a shape allows it the rule also
checks structure (a Discord token's first part is the base64 of a numeric id; an OpenAI
legacy key carries the `T3BlbkFJ` marker), and every body must pass `token_body_ok` (not a
placeholder, not masked, some entropy).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass

from ._checks import is_example, looks_random, token_body_ok

# Boundaries: a token is not part of a longer word.
_L = r"(?<![A-Za-z0-9_\-])"
_R = r"(?![A-Za-z0-9_\-])"
# GitHub's prefixes are distinctive enough to be found glued to a name with `-` or `_`
# (`key-ghp_…`, a token pasted into a file name), which the general boundary would hide.
_L_GH = r"(?<![A-Za-z0-9])"


@dataclass(frozen=True, slots=True)
class TokenRule:
    kind: str
    keywords: tuple[str, ...]  # case-sensitive literals, one of which must be on the line
    regex: re.Pattern[str]  # group "v" is the value (else the whole match), "b" the random body
    check: Callable[[re.Match[str]], bool] | None = None
    # How far before a keyword a match can start (`AKIA`: the keyword `IA` is 2 in; a Slack
    # webhook URL starts 8 before `hooks.slack`): the regex is tried only at those starts, so
    # a long line costs a few tries per keyword, not a scan per rule (`token_matches`).
    reach: int = 0


def _rule(kind: str, keywords: str | tuple[str, ...], pattern: str,
          check: Callable[[re.Match[str]], bool] | None = None, reach: int = 0) -> TokenRule:
    if isinstance(keywords, str):
        keywords = (keywords,)
    return TokenRule(kind, keywords, re.compile(pattern, re.ASCII), check, reach)


def _discord_id(m: re.Match[str]) -> bool:
    head = m.group("id")
    try:
        raw = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return False
    return 15 <= len(raw) <= 21 and raw.isdigit()


def _mixed(m: re.Match[str]) -> bool:
    """A body with no recognisable structure (generic `sk-…`): it must also look random."""
    return looks_random(m.group("b"))


def crc16_xmodem(data: bytes) -> int:
    """CRC-16 with polynomial 0x1021 and initial value 0 (XMODEM): the checksum NATS appends
    to every nkey."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


# NATS nkey seeds (docs.nats.io, "NKeys"): base32 (RFC 4648, unpadded) of two prefix bytes,
# the 32-byte Ed25519 seed and a CRC-16 of what comes before it, little-endian: 58
# characters. The prefix bytes hold the seed mark (18 << 3, the `S`) and the key's type
# (operator, account, user, server, cluster: the second letter, `SO`, `SA`, `SU`, `SN`, `SC`).
_NKEY_SEED_MARK = 18 << 3
_NKEY_TYPES = frozenset(t << 3 for t in (14, 0, 20, 13, 2))  # O A U N C


def _nkey_seed(m: re.Match[str]) -> bool:
    """The checksum holds and the prefix bytes say seed of a known type: a 58-character run
    of base32 letters that merely starts `SU` (an identifier in capitals) does not."""
    text = m.group("v")
    try:
        raw = base64.b32decode(text + "=" * (-len(text) % 8))
    except (binascii.Error, ValueError):
        return False
    if len(raw) != 36 or raw[0] & 0xF8 != _NKEY_SEED_MARK:
        return False
    key_type = ((raw[0] & 0x07) << 5) | (raw[1] >> 3)
    return key_type in _NKEY_TYPES and crc16_xmodem(raw[:-2]) == int.from_bytes(raw[-2:], "little")


def _url_body(m: re.Match[str]) -> bool:
    return not is_example(m.group("v"))


_B62 = "A-Za-z0-9"
TWILIO_SID = "Twilio API key SID"
_B64URL = "A-Za-z0-9_\\-"

TOKEN_RULES: tuple[TokenRule, ...] = (
    # Cloud providers
    _rule("AWS access key id", ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
          r"(?<![A-Za-z0-9])(?P<v>(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])(?P<b>[A-Z0-9]{16}))(?![A-Za-z0-9])"),
    _rule("Google API key", "AIza", rf"{_L}(?P<v>AIza(?P<b>[{_B64URL}]{{35}})){_R}"),
    _rule("Google OAuth client secret", "GOCSPX-", rf"{_L}(?P<v>GOCSPX-(?P<b>[{_B64URL}]{{28}})){_R}"),
    _rule("Google OAuth access token", "ya29.", rf"{_L}(?P<v>ya29\.(?P<b>[{_B64URL}]{{30,1024}})){_R}"),
    _rule("Azure storage account key", "AccountKey=",
          r"AccountKey=(?P<v>(?P<b>[A-Za-z0-9+/]{40,1024})={0,2})(?![A-Za-z0-9+/=])"),
    _rule("Azure shared access key", "SharedAccessKey=",
          r"SharedAccessKey=(?P<v>(?P<b>[A-Za-z0-9+/]{30,1024})={0,2})(?![A-Za-z0-9+/=])"),
    _rule("Azure SAS token", "sig=",
          r"[?&;]sig=(?P<v>(?P<b>[A-Za-z0-9%+/]{30,1024})(?:%3D|=){0,2})(?![A-Za-z0-9%+/=])", reach=1),
    # Version control
    _rule("GitHub token", "ghp_", rf"{_L_GH}(?P<v>ghp_(?P<b>[{_B62}]{{36,255}})){_R}"),
    _rule("GitHub OAuth token", "gho_", rf"{_L_GH}(?P<v>gho_(?P<b>[{_B62}]{{36,255}})){_R}"),
    _rule("GitHub app token", ("ghu_", "ghs_"), rf"{_L_GH}(?P<v>gh[us]_(?P<b>[{_B62}]{{36,255}})){_R}"),
    _rule("GitHub refresh token", "ghr_", rf"{_L_GH}(?P<v>ghr_(?P<b>[{_B62}]{{36,255}})){_R}"),
    _rule("GitHub fine-grained token", "github_pat_", rf"{_L_GH}(?P<v>github_pat_(?P<b>[{_B62}_]{{60,255}})){_R}"),
    _rule("GitLab token", tuple(f"gl{k}-" for k in ("pat", "dt", "rt", "ptt", "ft", "soat", "imt", "cbt", "oas")),
          rf"{_L}(?P<v>gl(?:pat|dt|rt|ptt|ft|soat|imt|cbt|oas)-(?P<b>[{_B64URL}]{{20,1024}})(?:\.[0-9a-z]{{2}}\.[0-9a-z]{{7,9}})?){_R}"),
    # Chat and webhooks
    _rule("Slack token", tuple(f"xox{c}-" for c in "abposer"),
          rf"{_L}(?P<v>(?:xoxe\.)?xox[abposer]-(?P<b>[0-9A-Za-z\-]{{10,250}})){_R}", reach=5),
    _rule("Slack token", "xapp-", rf"{_L}(?P<v>xapp-\d-(?P<b>[A-Z0-9]+-\d+-[a-z0-9]{{20,1024}})){_R}"),
    _rule("Slack webhook URL", "hooks.slack",
          r"(?P<v>https?://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<b>[A-Za-z0-9_/\-]{20,1024}))",
          _url_body, reach=8),
    _rule("Discord webhook URL", ".com/api/webhooks",
          r"(?P<v>https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d{5,25}/(?P<b>[A-Za-z0-9_\-]{40,1024}))",
          _url_body, reach=25),
    # The first part is the base64 of a numeric user id, so it starts with one of these pairs.
    _rule("Discord bot token", ("MT", "Mj", "Mz", "ND", "NT", "Nj", "Nz", "OD", "OT"),
          r"(?<![A-Za-z0-9_\-.])(?P<v>(?P<id>[MNO][A-Za-z0-9_\-]{23,27})\.[A-Za-z0-9_\-]{6}\.(?P<b>[A-Za-z0-9_\-]{27,40}))(?![A-Za-z0-9_\-.])",
          _discord_id),
    _rule("Telegram bot token", ":A",
          r"(?<![A-Za-z0-9_:])(?P<v>[0-9]{6,12}:(?P<b>A[A-Za-z0-9_\-]{34}))(?![A-Za-z0-9_\-])", reach=12),
    # Payments
    _rule("Stripe secret key", ("sk_live_", "sk_test_"),
          rf"{_L}(?P<v>sk_(?:live|test)_(?P<b>[{_B62}]{{20,255}})){_R}"),
    _rule("Stripe restricted key", ("rk_live_", "rk_test_"),
          rf"{_L}(?P<v>rk_(?:live|test)_(?P<b>[{_B62}]{{20,255}})){_R}"),
    _rule("Stripe webhook secret", "whsec_", rf"{_L}(?P<v>whsec_(?P<b>[{_B62}]{{24,1024}})){_R}"),
    # LLM providers (specific shapes first: earlier rules win an overlap)
    _rule("Anthropic API key", "sk-", rf"{_L}(?P<v>sk-ant-(?:[a-z]{{3,6}}\d\d-)?(?P<b>[{_B64URL}]{{32,1024}})){_R}"),
    _rule("OpenRouter API key", "sk-", rf"{_L}(?P<v>sk-or-v\d-(?P<b>[0-9a-f]{{64}})){_R}"),
    _rule("OpenAI API key", "sk-", rf"{_L}(?P<v>sk-(?:proj|svcacct|admin|None)-(?P<b>[{_B64URL}]{{20,1024}})){_R}"),
    _rule("OpenAI API key", "sk-", rf"{_L}(?P<v>sk-(?P<b>[{_B64URL}]{{8,1024}}T3BlbkFJ[{_B64URL}]{{8,1024}})){_R}"),
    _rule("LLM API key", "sk-", rf"{_L}(?P<v>sk-(?P<b>[A-Za-z0-9][{_B64URL}]{{19,1024}})){_R}", _mixed),
    _rule("Hugging Face token", "hf_", rf"{_L}(?P<v>hf_(?P<b>[{_B62}]{{30,1024}})){_R}"),
    _rule("Groq API key", "gsk_", rf"{_L}(?P<v>gsk_(?P<b>[{_B62}]{{40,1024}})){_R}"),
    _rule("xAI API key", "xai-", rf"{_L}(?P<v>xai-(?P<b>[{_B62}]{{60,1024}})){_R}"),
    _rule("Perplexity API key", "pplx-", rf"{_L}(?P<v>pplx-(?P<b>[{_B62}]{{40,1024}})){_R}"),
    _rule("Replicate API token", "r8_", rf"{_L}(?P<v>r8_(?P<b>[{_B62}]{{30,1024}})){_R}"),
    # Package registries
    _rule("npm token", "npm_", rf"{_L}(?P<v>npm_(?P<b>[{_B62}]{{36}})){_R}"),
    _rule("PyPI token", "pypi-",
          rf"{_L}(?P<v>pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)(?P<b>[{_B64URL}]{{40,1024}})){_R}"),
    # Other services with a fixed prefix
    _rule("SendGrid API key", "SG.", rf"{_L}(?P<v>SG\.(?P<b>[{_B64URL}]{{22}}\.[{_B64URL}]{{43}})){_R}"),
    _rule("Shopify token", ("shpat_", "shpca_", "shppa_", "shpss_"),
          rf"{_L}(?P<v>shp(?:at|ca|pa|ss)_(?P<b>[a-fA-F0-9]{{32}})){_R}"),
    _rule("DigitalOcean token", "_v1_", rf"{_L}(?P<v>do[por]_v1_(?P<b>[a-f0-9]{{64}})){_R}", reach=3),
    _rule("Linear API key", "lin_api_", rf"{_L}(?P<v>lin_api_(?P<b>[{_B62}]{{40}})){_R}"),
    _rule("Notion token", "ntn_", rf"{_L}(?P<v>ntn_(?P<b>[{_B62}]{{40,1024}})){_R}"),
    _rule("Postman API key", "PMAK-", rf"{_L}(?P<v>PMAK-(?P<b>[a-fA-F0-9]{{24}}-[a-fA-F0-9]{{34}})){_R}"),
    _rule("HashiCorp Vault token", ("hvs.", "hvb."), rf"{_L}(?P<v>hv[sb]\.(?P<b>[{_B64URL}]{{24,1024}})){_R}"),
    _rule("Atlassian API token", "ATATT", rf"{_L}(?P<v>ATATT(?P<b>[{_B64URL}=]{{60,1024}})){_R}"),
    _rule("Databricks token", "dapi", rf"{_L}(?P<v>dapi(?P<b>[a-f0-9]{{32}})(?:-\d)?){_R}"),
    _rule("Figma token", "figd_", rf"{_L}(?P<v>figd_(?P<b>[{_B64URL}]{{40,1024}})){_R}"),
    _rule("Supabase token", "sbp_", rf"{_L}(?P<v>sbp_(?P<b>[a-f0-9]{{40}})){_R}"),
    # Twilio documents an API key's SID as `SK` and 32 hex digits. The SID is the key's name,
    # not its secret: `find_secrets` reports the secret written beside it, and the SID itself
    # only where a secret-named key names it (docs/decisions.md, "Secrets: Twilio and PuTTY").
    _rule(TWILIO_SID, "SK", rf"{_L}(?P<v>SK(?P<b>[0-9a-f]{{32}})){_R}"),
    # Its third letter is always `A` (the second prefix byte's bits after the type letter are
    # zero for every type): three-letter keywords pass over words in capitals (`SUMMARY`,
    # `SCOPE`, `SNAKE`) that two-letter ones made candidate lines (ordinary notes: 50% slower).
    _rule("NATS nkey seed", ("SUA", "SAA", "SOA", "SNA", "SCA"),
          r"(?<![A-Za-z0-9_\-])(?P<v>S[UAONC]A(?P<b>[A-Z2-7]{55}))(?![A-Za-z0-9_\-])", _nkey_seed),
    # JSON Web Tokens: header and payload are base64url JSON objects ("eyJ" = '{"').
    _rule("JWT", "eyJ",
          r"(?<![A-Za-z0-9_\-])(?P<v>eyJ[A-Za-z0-9_\-]{10,8192}\.e[yw][A-Za-z0-9_\-]{10,8192}\.(?P<b>[A-Za-z0-9_\-]{16,1024}))(?![A-Za-z0-9_\-.])"),
)


def token_matches(rule: TokenRule, line: str, where: dict[str, list[int]] | None = None) -> list[re.Match[str]]:
    """What `rule.regex.finditer(line)` gives, found by trying the regex only where a match
    can start: at most `rule.reach` characters before each of its keywords (`where`: each
    keyword's positions on the line, when the caller found them already). Linear in the
    line's length whatever it holds (a 1 MB drawing stored as one line of JSON)."""
    starts: set[int] = set()
    for kw in rule.keywords:
        if where is not None:
            found = where.get(kw, ())
        else:
            found = []
            p = line.find(kw)
            while p != -1:
                found.append(p)
                p = line.find(kw, p + 1)
        for p in found:
            starts.update(range(max(0, p - rule.reach), p + 1))
    out: list[re.Match[str]] = []
    last = -1
    for q in sorted(starts):
        if q < last:
            continue
        m = rule.regex.match(line, q)
        if m is not None:
            out.append(m)
            last = m.end()
    return out


def body_ok(rule: TokenRule, m: re.Match[str]) -> bool:
    body = m.group("b")
    if m.string.startswith(("...", "…"), m.end("v")):
        return False  # elided in documentation: `sk-ant-api03-Zx8…`, the rest left out
    if not token_body_ok(body) or is_example(m.group("v")):
        return False
    return rule.check is None or rule.check(m)
