"""Labelled evaluation of PM401 (secret detection): recall and precision per kind and overall,
with detect-secrets beside it when it is installed.

    python benchmarks/secrets_eval.py [--seed N] [--per-kind N] [--no-detect-secrets] [--dump DIR]

The set is generated (seeded, deterministic): fake values built at random in the real token
formats — never real secrets — planted in realistic memory notes (English and Chinese prose,
code blocks, tables, links), beside negatives of every kind (placeholders, git SHAs, UUIDs,
named hashes, paths, ordinary URLs, data URIs, versions, semantic words, documented example
keys, public keys and certificates, ids). Token prefixes are built by concatenation so that
no token-shaped literal sits in this file.

A planted positive counts as found when a match overlaps its value; a match counts as correct
when it overlaps a planted positive. `exact` is the share of found positives whose match range
is exactly the planted value; `kind` the share reported under the expected kind.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import string
import sys
import time
import urllib.parse
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

B62 = string.ascii_letters + string.digits
B64 = B62 + "+/"
B64URL = B62 + "-_"
HEX = "0123456789abcdef"
UPPER_B32 = string.ascii_uppercase + "234567"

# Prefixes, spelled in pieces.
P = {
    "akia": "AK" + "IA", "asia": "AS" + "IA", "aiza": "AI" + "za",
    "ghp": "gh" + "p_", "gho": "gh" + "o_", "ghu": "gh" + "u_", "ghs": "gh" + "s_", "ghr": "gh" + "r_",
    "ghpat": "github" + "_pat_", "glpat": "gl" + "pat-",
    "xoxb": "xo" + "xb-", "xoxp": "xo" + "xp-", "xoxa": "xo" + "xa-", "xapp": "xa" + "pp-",
    "slackhook": "https://hooks." + "slack.com/services/",
    "discordhook": "https://discord" + ".com/api/" + "webhooks/",
    "sklive": "sk" + "_live_", "sktest": "sk" + "_test_", "rklive": "rk" + "_live_", "rktest": "rk" + "_test_",
    "skproj": "sk" + "-proj-", "sk": "sk" + "-", "skant": "sk" + "-ant-" + "api03-", "oai": "T3Blbk" + "FJ",
    "npm": "np" + "m_", "pypi": "pyp" + "i-" + "AgEIcHlwaS5vcmc",
    "begin": "-----BEG" + "IN ", "end": "-----EN" + "D ", "pk": "PRIVATE" + " KEY",
}


def rs(r: random.Random, n: int, alphabet: str = B62) -> str:
    return "".join(r.choice(alphabet) for _ in range(n))


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# --------------------------------------------------------------------------------------------
# Positive value generators: kind -> f(r) -> value (or, for PEM, lines)
# --------------------------------------------------------------------------------------------

def v_aws_id(r):
    return r.choice([P["akia"], P["akia"], P["asia"]]) + rs(r, 16, UPPER_B32)


def v_aws_secret(r):
    while True:
        v = rs(r, 40, B64)
        if any(c.isdigit() for c in v) and v.lower() != v and v.upper() != v:
            return v


def v_jwt(r):
    header = {"alg": r.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"}
    payload = {"sub": str(r.randrange(10**6, 10**9)), "name": r.choice(["Ada", "Lin", "Wei", "Sam"]),
               "iat": r.randrange(1600000000, 1800000000), "scope": r.choice(["read", "read write", "admin"])}
    sig = bytes(r.randrange(256) for _ in range(r.choice([32, 64, 256])))
    return ".".join([b64url(json.dumps(header, separators=(",", ":")).encode()),
                     b64url(json.dumps(payload, separators=(",", ":")).encode()), b64url(sig)])


def v_discord_bot(r):
    uid = str(r.randrange(10**17, 10**19))
    return b64url(uid.encode()) + "." + rs(r, 6, B64URL) + "." + rs(r, r.choice([27, 38]), B64URL)


def v_url_password(r):
    return rs(r, r.randint(10, 22), B62 + "-_.~")


# Passwords people choose: words with digits and a symbol, often words that also make
# placeholders ("MySecretPass99", "Hunter2SuperSecret!"): found all the same (PM401 decision
# "placeholders are whole values").
CHOSEN_WORDS = ["My", "Secret", "Pass", "Token", "Test", "Super", "Hunter", "Key", "Admin", "Blue", "Horse",
                "Summer", "Dragon", "Coffee", "Tiger", "River", "Maple", "Winter"]
CHOSEN_PLACEHOLDERISH = ["Secret", "Pass", "Token", "Test", "Super", "Hunter", "Key", "Admin"]


def v_chosen_password(r):
    first = r.choice(CHOSEN_PLACEHOLDERISH)
    words = [first, *r.sample([w for w in CHOSEN_WORDS if w != first], 2)]
    r.shuffle(words)
    if r.random() < 0.5:
        words[0] += str(r.randint(1, 9))
    if r.random() < 0.6:
        words.insert(r.randint(1, 2), r.choice("!@*"))
    return "".join(words) + str(r.randint(10, 9999))


def v_password(r):
    while True:
        v = rs(r, r.randint(10, 20), B62 + "!#%^&*+-_=?@")
        if any(c.isdigit() for c in v) and any(c.isalpha() for c in v):
            if v[0] in string.ascii_uppercase:  # about a third: a chosen password instead
                # drawn from its own generator, so that the rest of the set stays as it was
                return v_chosen_password(random.Random(v))
            return v


TOKENS = {
    "AWS access key id": v_aws_id,
    "AWS secret access key": v_aws_secret,
    "Google API key": lambda r: P["aiza"] + rs(r, 35, B64URL),
    "Azure storage account key": lambda r: rs(r, 86, B64) + "==",
    "GitHub token": lambda r: P["ghp"] + rs(r, 36),
    "GitHub OAuth token": lambda r: P["gho"] + rs(r, 36),
    "GitHub app token": lambda r: r.choice([P["ghu"], P["ghs"]]) + rs(r, 36),
    "GitHub refresh token": lambda r: P["ghr"] + rs(r, 36),
    "GitHub fine-grained token": lambda r: P["ghpat"] + rs(r, 22) + "_" + rs(r, 59),
    "GitLab token": lambda r: P["glpat"] + rs(r, 20, B64URL.replace("-", "")),
    "Slack token": lambda r: r.choice([
        P["xoxb"] + rs(r, 11, "0123456789") + "-" + rs(r, 13, "0123456789") + "-" + rs(r, 24),
        P["xoxp"] + rs(r, 11, "0123456789") + "-" + rs(r, 12, "0123456789") + "-" + rs(r, 13, "0123456789") + "-" + rs(r, 32, HEX),
        P["xoxa"] + "2-" + rs(r, 11, "0123456789") + "-" + rs(r, 12, "0123456789") + "-" + rs(r, 32, HEX),
        P["xapp"] + "1-A" + rs(r, 10, string.ascii_uppercase + string.digits) + "-" + rs(r, 13, "0123456789") + "-" + rs(r, 64, HEX),
    ]),
    "Slack webhook URL": lambda r: P["slackhook"] + "T" + rs(r, 8, string.ascii_uppercase + string.digits) + "/B"
        + rs(r, 10, string.ascii_uppercase + string.digits) + "/" + rs(r, 24),
    "Discord bot token": v_discord_bot,
    "Discord webhook URL": lambda r: P["discordhook"] + rs(r, 18, "0123456789") + "/" + rs(r, 68, B64URL),
    "Telegram bot token": lambda r: str(r.randrange(10**8, 10**10)) + ":AA" + rs(r, 33, B64URL),
    "Stripe secret key": lambda r: r.choice([P["sklive"], P["sktest"]]) + rs(r, r.choice([24, 99])),
    "Stripe restricted key": lambda r: r.choice([P["rklive"], P["rktest"]]) + rs(r, r.choice([24, 99])),
    "OpenAI API key": lambda r: r.choice([
        P["skproj"] + rs(r, 74, B64URL) + P["oai"] + rs(r, 74, B64URL),
        P["sk"] + rs(r, 20) + P["oai"] + rs(r, 20),
    ]),
    "Anthropic API key": lambda r: P["skant"] + rs(r, 93, B64URL) + "AA",
    "LLM API key": lambda r: P["sk"] + r.choice([rs(r, 32, HEX), rs(r, 48)]),
    "npm token": lambda r: P["npm"] + rs(r, 36),
    "PyPI token": lambda r: P["pypi"] + rs(r, r.randint(60, 150), B64URL),
    "JWT": v_jwt,
}

TOKEN_NAMES = {  # how notes talk about them: (English name, Chinese name, ENV name)
    "AWS access key id": ("AWS access key", "AWS 访问密钥 ID", "AWS_ACCESS_KEY_ID"),
    "AWS secret access key": ("AWS secret access key", "AWS 私有访问密钥", "AWS_SECRET_ACCESS_KEY"),
    "Google API key": ("Maps API key", "谷歌地图 API key", "GOOGLE_MAPS_KEY"),
    "Azure storage account key": ("storage connection string", "存储连接串", "AZURE_STORAGE_CONNECTION_STRING"),
    "GitHub token": ("GitHub PAT", "GitHub 令牌", "GITHUB_TOKEN"),
    "GitHub OAuth token": ("GitHub OAuth token", "GitHub OAuth 令牌", "GH_OAUTH"),
    "GitHub app token": ("installation token", "GitHub App 令牌", "GH_APP"),
    "GitHub refresh token": ("refresh token", "刷新令牌", "GH_REFRESH"),
    "GitHub fine-grained token": ("fine-grained PAT", "细粒度令牌", "GH_PAT"),
    "GitLab token": ("GitLab token", "GitLab 令牌", "GITLAB_TOKEN"),
    "Slack token": ("Slack bot token", "Slack 机器人令牌", "SLACK_BOT_TOKEN"),
    "Slack webhook URL": ("Slack webhook", "Slack 回调地址", "SLACK_WEBHOOK"),
    "Discord bot token": ("Discord bot token", "Discord 机器人令牌", "DISCORD_TOKEN"),
    "Discord webhook URL": ("Discord webhook", "Discord 回调地址", "DISCORD_WEBHOOK"),
    "Telegram bot token": ("Telegram bot token", "Telegram 机器人令牌", "TELEGRAM_BOT_TOKEN"),
    "Stripe secret key": ("Stripe key", "Stripe 密钥", "STRIPE_SECRET_KEY"),
    "Stripe restricted key": ("Stripe restricted key", "Stripe 受限密钥", "STRIPE_RK"),
    "OpenAI API key": ("OpenAI key", "OpenAI 密钥", "OPENAI_API_KEY"),
    "Anthropic API key": ("Anthropic key", "Claude 密钥", "ANTHROPIC_API_KEY"),
    "LLM API key": ("DeepSeek key", "大模型 API 密钥", "DEEPSEEK_API_KEY"),
    "npm token": ("npm publish token", "npm 发布令牌", "NPM_TOKEN"),
    "PyPI token": ("PyPI upload token", "PyPI 上传令牌", "PYPI_TOKEN"),
    "JWT": ("session JWT", "会话 JWT", "SESSION_JWT"),
}

# Each context: list of lines, one holding {v}. {name}, {zh}, {env}, {envl} are filled first.
TOKEN_CONTEXTS = [
    ["- {name}: `{v}`"],
    ["{name}: {v}"],
    ["```bash", "export {env}={v}", "./deploy.sh --env staging", "```"],
    ["```yaml", "service: billing", "{envl}: \"{v}\"", "region: eu-west-1", "```"],
    ["| Service | Credential | Rotated |", "|---|---|---|", "| billing | {v} | 2025-03-02 |"],
    ["The {name} for staging is {v} — rotate it after the demo."],
    ["部署用的{zh}：{v}"],
    ["- {zh}是 `{v}`，下周轮换。"],
    ["```python", "{env} = \"{v}\"", "client = Client(timeout=30)", "```"],
    ["```json", "{{", "  \"name\": \"billing\",", "  \"{envl}\": \"{v}\"", "}}", "```"],
    ["> Pasted from the chat: {v}"],
    ["Use {v} when the CI asks for credentials."],
    ["{zh}是{v}，别外传。"],
    ["<details><summary>{name}</summary><code>{v}</code></details>"],
    ["- [ ] rotate `{v}` before Friday"],
    ["{name}（{v}）已经在 Slack 里贴过一次，需要作废。"],
    ["```yaml", "env:", "  - name: {env}", "    value: {v}", "```"],
    ["    {env}: {v}  # staging only"],
]
SPECIAL_CONTEXTS = {
    "Azure storage account key": [
        ["AZURE_STORAGE_CONNECTION_STRING=\"DefaultEndpointsProtocol=https;AccountName=billingprod;AccountKey={v};EndpointSuffix=core.windows.net\""],
        ["- 连接串：`DefaultEndpointsProtocol=https;AccountName=logs{n};AccountKey={v};EndpointSuffix=core.windows.net`"],
    ],
    "AWS secret access key": [
        ["```ini", "[default]", "aws_access_key_id = {id}", "aws_secret_access_key = {v}", "```"],
        ["AWS_SECRET_ACCESS_KEY={v}"],
        ["```json", "{{", "  \"AccessKeyId\": \"{id}\",", "  \"SecretAccessKey\": \"{v}\"", "}}", "```"],
        ["- Secret access key: `{v}`"],
        ["| deploy-bot | {id} | {v} |"],
        ["- AWS 私有访问密钥：{v}"],
    ],
    "JWT": [
        ["curl -H \"Authorization: Bearer {v}\" https://api.internal.test/v1/me"],
        ["- session cookie: `{v}`"],
        ["id_token: {v}"],
    ],
}

PEM_LABELS = ["RSA", "EC", "OPENSSH", "", "ENCRYPTED", "DSA"]


def pem_block(r, label: str) -> tuple[list[str], int, int]:
    """Lines of a private key block; (first body line, last body line) indexes."""
    lab = (label + " " if label else "") + P["pk"]
    width = 70 if label == "OPENSSH" else 64
    head = {"RSA": "MIIEpAIBAAKCAQEA", "EC": "MHcCAQEEI", "OPENSSH": "b3BlbnNzaC1rZXktdjEAAAAA",
            "": "MIIEvgIBADANBgkqhkiG9w0BAQEFAASC", "ENCRYPTED": "MIIFHDBOBgkqhkiG9w0BBQ0wQTAp",
            "DSA": "MIIBuwIBAAKBgQ"}[label]
    body = head + rs(r, r.randint(180, 1600), B64)
    rows = [body[i:i + width] for i in range(0, len(body), width)]
    if label == "RSA" and r.random() < 0.3:
        pre = ["Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-128-CBC," + rs(r, 32, HEX.upper()), ""]
    else:
        pre = []
    lines = [P["begin"] + lab + "-----", *pre, *rows, P["end"] + lab + "-----"]
    return lines, 1 + len(pre), len(lines) - 2


def pgp_block(r) -> tuple[list[str], int, int]:
    lab = "PGP " + P["pk"] + " BLOCK"
    body = "lQdGBF" + rs(r, r.randint(300, 1200), B64)
    rows = [body[i:i + 64] for i in range(0, len(body), 64)] + ["=" + rs(r, 4, B64)]
    lines = [P["begin"] + lab + "-----", "Version: GnuPG v2", "", *rows, P["end"] + lab + "-----"]
    return lines, 3, len(lines) - 2


def sa_json_line(r) -> tuple[str, int, int, str]:
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + rs(r, 1580, B64)
    chunks = "\\n".join(body[i:i + 64] for i in range(0, len(body), 64))
    pre = '  "private_key": "' + P["begin"] + P["pk"] + "-----\\n"
    line = pre + chunks + "\\n" + P["end"] + P["pk"] + '-----\\n",'
    return line, len(pre), len(pre) + len(chunks), chunks


GENERIC = {  # kind -> (keys, value generator)
    "password": (["password", "Password", "passwd", "pwd", "DB_PASSWORD", "admin password", "root_password",
                  "密码", "数据库密码", "口令", "Wi-Fi password"], v_password),
    "API key": (["api_key", "apikey", "API key", "X-API-Key", "WEATHER_API_KEY", "apiKey"],
                lambda r: r.choice([rs(r, 32), rs(r, 40, HEX), rs(r, 24, B62) + "-" + rs(r, 8)])),
    "token": (["token", "auth_token", "access_token", "Bot token", "令牌", "访问令牌", "sessionToken"],
              lambda r: rs(r, r.randint(24, 48), B64URL)),
    "secret": (["secret", "JWT_SECRET", "app secret", "webhook_secret", "signingSecret"],
               lambda r: rs(r, r.randint(24, 64), B64)),
    "client secret": (["client_secret", "clientSecret", "OAuth client secret"], lambda r: rs(r, 40, B64URL)),
    "secret key": (["secret_key", "SECRET_KEY", "密钥", "encryption key", "signing_key"],
                   lambda r: rs(r, r.randint(32, 50), B62 + "!@#%^&*(-_=+)")),
}
GENERIC_CONTEXTS = [
    ["{k}: {v}"],
    ["- {k}: {v}"],
    ["- **{k}:** `{v}`"],
    ["**{k}**: {v}"],
    ["```bash", "{K}={v}", "```"],
    ["```json", "{{\"user\": \"svc\", \"{kl}\": \"{v}\"}}", "```"],
    ["```python", "{kl} = \"{v}\"", "```"],
    ["| Setting | Value |", "|---|---|", "| {k} | `{v}` |"],
    ["| Host | User | {k} |", "| --- | --- | --- |", "| db-{n}.internal | app | {v} |"],
    ["{k}：{v}"],
    ["  {kl}: '{v}'"],
    ["{k}：`{v}`。"],
    ["{k} = {v}  # rotated 2025-01"],
    ["  - {kl}: {v}"],
    ["{k}: {v} (rotated monthly)"],
    ["Endpoint: https://api.internal.test/v1/data?{kl}={v}&format=json"],
    ["Server=db.internal;Database=billing;User Id=app;{K}={v};"],
]
CLI_PASSWORD = ["mysql -h db.internal -u app --password {v} billing"]


# --------------------------------------------------------------------------------------------
# Negatives: category -> f(r) -> (context lines with {v}, value)
# --------------------------------------------------------------------------------------------

def n_placeholder(r):
    v = r.choice([
        P["sk"] + "x" * r.randint(20, 48), P["ghp"] + "X" * 36, "<your-key>", "YOUR_API_KEY", "***", "****",
        "changeme", "password", "example", "dummy", "${DB_PASSWORD}", "$API_TOKEN", "{{ vault_token }}",
        "os.environ[\"OPENAI_API_KEY\"]", "process.env.STRIPE_KEY", "getenv(\"TOKEN\")", "%(password)s",
        P["akia"] + "X" * 16, "<token>", "REDACTED", "[REDACTED]", "${{ secrets.GITHUB_TOKEN }}",
        P["xoxb"] + "your-token-here", "xxxxxxxx-xxxx", "<redacted>", "P@ssw0rd", "hunter2", "sk-...",
        "********", "your_password_here", "{{password}}", "os.getenv('SECRET_KEY')", "$(cat ~/.token)",
        "env(\"API_KEY\")", "settings.SECRET_KEY", "secret", "<paste token here>", "TODO",
    ])
    ctx = r.choice([["api_key: {v}"], ["password = {v}"], ["export TOKEN={v}"], ["\"secret\": \"{v}\""],
                    ["- Token: `{v}`"], ["密码：{v}"], ["OPENAI_API_KEY={v}"], ["**Password:** {v}"]])
    return ctx, v


def n_git_sha(r):
    v = rs(r, r.choice([7, 8, 10, 12, 40, 40]), HEX)
    ctx = r.choice([["Fixed in commit {v}."], ["- base: `{v}`"], ["Reverted '{v}' after the outage."],
                    ["rev: \"{v}\""], ["commit {v}"], ["已在提交 {v} 中修复。"], ["| fix | {v} | merged |"],
                    ["pinned to {v} until upstream releases"]])
    return ctx, v


def n_uuid(r):
    v = str(uuid.UUID(int=r.getrandbits(128), version=4))
    ctx = r.choice([["request id `{v}`"], ["- id: {v}"], ["uuid = \"{v}\""], ["trace: {v}"],
                    ["tenant {v} was migrated"], ["工单编号：{v}"]])
    return ctx, v


def n_named_hash(r):
    kind = r.randrange(4)
    if kind == 0:
        v = "sha256:" + rs(r, 64, HEX)
        ctx = r.choice([["image: registry.internal/api@{v}"], ["checksum: {v}"], ["- digest `{v}`"]])
    elif kind == 1:
        v = "sha512-" + rs(r, 86, B64) + "=="
        ctx = [["```json", "\"node_modules/left-pad\": {{", "  \"version\": \"1.3.0\",", "  \"integrity\": \"{v}\"", "}}", "```"],
               ["integrity: {v}"]][r.randrange(2)]
    elif kind == 2:
        v = rs(r, 32, HEX)
        ctx = r.choice([["md5: {v}"], ["- MD5 of the dump: {v}"]])
    else:
        v = rs(r, 64, HEX)
        ctx = r.choice([["sha256sum: {v}"], ["SHA-256 `{v}`"]])
    return ctx, v


def n_path(r):
    v = r.choice(["/run/secrets/db_password", "~/.config/gh/hosts.yml", "~/.ssh/id_ed25519", "./keys/deploy.pem",
                  "/etc/app/secret.key", "/Users/lin/Projects/api/keys/service-account.json",
                  "~/.aws/credentials", "C:\\Users\\lin\\secrets\\token.txt", "../shared/passwords.kdbx",
                  "/var/lib/postgres/.pgpass"])
    ctx = r.choice([["password_file: {v}"], ["token: {v}"], ["key: {v}"], ["private_key: {v}"], ["secret: {v}"],
                    ["- Credentials live in `{v}`"], ["密钥文件：{v}"], ["api_key = {v}"]])
    return ctx, v


def n_url(r):
    v = r.choice([
        "https://docs.python.org/3/library/secrets.html", "https://lin@git.internal.test/infra/deploy.git",
        "ssh://git@github.com:22/org/repo.git", "git@github.com:org/repo.git", "https://oauth2.googleapis.com/token",
        "https://github.com/settings/tokens", "http://localhost:8080/api/v1", "postgres://localhost:5432/app",
        "redis://localhost:6379/0", "mongodb://db1:27017,db2:27017/app?replicaSet=rs0",
        "https://medium.com/@author/how-we-rotate-keys-3f2a9c", "https://www.npmjs.com/package/@scope/pkg",
        "postgres://app:${DB_PASSWORD}@db.internal:5432/app", "postgres://app:password@localhost/app",
        "https://user:<token>@github.com/org/repo.git", "https://x-access-token:${GITHUB_TOKEN}@github.com/o/r",
        "redis://:changeme@cache:6379", "mysql://root:root@127.0.0.1:3306/test", "https://example.com/path?page=2#top",
        "https://grafana.internal.test/d/abc123/latency?orgId=1&from=now-6h",
    ])
    ctx = r.choice([["See {v} for details."], ["- url: {v}"], ["[link]({v})"], ["DATABASE_URL={v}"],
                    ["参考：{v}"], ["| repo | {v} |"]])
    return ctx, v


def n_data_uri(r):
    v = "data:image/" + r.choice(["png", "jpeg", "gif"]) + ";base64," + "iVBORw0KGgo" + rs(r, r.randint(80, 400), B64) + "="
    ctx = r.choice([["![logo]({v})"], ["<img src=\"{v}\" alt=\"diagram\">"], ["icon: {v}"]])
    return ctx, v


def n_version(r):
    v = r.choice(["v1.2.3", "2.14.0-rc.1", "3.11.4", "20.11.1", "0.1.0", "v0.23.0-beta.2", "1.0.0+build.5"])
    ctx = r.choice([["version: {v}"], ["- pinned `{v}`"], ["\"version\": \"{v}\""], ["token_version: {v}"],
                    ["Upgraded to {v} last week."], ["版本：{v}"]])
    return ctx, v


def n_semantic(r):
    line = r.choice([
        "token: refresh tokens expire after 30 days", "password: see 1Password", "密码：保存在 1Password 里",
        "API key: stored in the team vault", "Secret: rotate quarterly", "Token: none yet",
        "The password is in the keychain.", "密钥：放在 Vault 里，不要写进笔记", "令牌：每 30 天轮换一次",
        "Password: ask Alice", "api_key: required for the /v2 endpoints", "Auth: OAuth2 with PKCE",
        "- Secret management: SOPS + age", "token: use the bot account's", "passwords: never in this file",
        "**Token:** ask in #infra", "client_secret: in Bitwarden under 'prod-oauth'", "secret_name: prod-db-credentials",
        "| password | in 1Password |", "max_tokens: 4096", "password_policy: min 12 chars, rotated yearly",
        "口令：见密码管理器", "access_token: short-lived, minted by the CLI", "Key: the Summary section comes first",
        "secret: kubernetes-secret-v2", "password: correct horse battery staple (not really)",
        "token_type: Bearer", "api_key_header: X-API-Key", "Tokenizer: cl100k_base",
    ])
    return [line.replace("{", "{{").replace("}", "}}")], None


def n_example(r):
    v = r.choice([
        "AKIA" + "IOSFODNN7" + "EXAMPLE", "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCY" + "EXAMPLEKEY",
        P["ghp"] + "EXAMPLE" + rs(r, 29), P["skproj"] + "example" + rs(r, 40), P["sktest"] + "sample" + rs(r, 20),
        P["xoxb"] + "dummy-" + rs(r, 20, "0123456789"), P["npm"] + "FAKE" + rs(r, 32),
    ])
    ctx = r.choice([["aws_access_key_id = {v}"], ["aws_secret_access_key = {v}"], ["- docs example: `{v}`"],
                    ["e.g. `{v}`"], ["token: {v}"], ["示例：{v}"]])
    return ctx, v


def n_public_material(r):
    k = r.randrange(4)
    if k == 0:
        lab = "PUBLIC" + " KEY"
        body = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA" + rs(r, 300, B64)
        rows = [body[i:i + 64] for i in range(0, len(body), 64)]
        return ["```", P["begin"] + lab + "-----", *rows, P["end"] + lab + "-----", "```"], None
    if k == 1:
        lab = "CERTIFICATE"
        body = "MIIDdzCCAl+gAwIBAgIE" + rs(r, 800, B64)
        rows = [body[i:i + 64] for i in range(0, len(body), 64)]
        return [P["begin"] + lab + "-----", *rows, P["end"] + lab + "-----"], None
    if k == 2:
        return ["- deploy key (public): `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + rs(r, 43, B64) + " ci@build`"], None
    lab = "RSA " + P["pk"]
    return ["```", P["begin"] + lab + "-----", r.choice(["...", "<key material omitted>", "[REDACTED]", "MIIE…"]),
            P["end"] + lab + "-----", "```"], None


def n_ids(r):
    line = r.choice([
        "arn:aws:iam::" + rs(r, 12, "0123456789") + ":role/deploy", "instance i-0" + rs(r, 16, HEX) + " was replaced",
        "Slack channel C0" + rs(r, 8, string.ascii_uppercase + string.digits), "pod web-7d4b9c8f6d-" + rs(r, 5, "bcdfghjklmnpqrstvwxz2456789"),
        "`echo aGVsbG8gd29ybGQ= | base64 -d`", "Meeting moved to 10:30, ratio 16:9 slides.",
        "video: https://youtu.be/" + rs(r, 11, B64URL), "order #" + rs(r, 10, "0123456789") + " refunded",
        "build " + rs(r, 8, HEX) + "-" + rs(r, 4, HEX) + " passed", "Key ID: " + rs(r, 16, HEX.upper()),
        "ETag: \"" + rs(r, 32, HEX) + "\"", "- session id in logs: " + rs(r, 26, string.ascii_lowercase + string.digits),
        "scikit-learn (sk-learn) 1.5 is pinned", "ISBN 978-" + rs(r, 10, "0123456789"),
        "eyJhbGciOiJIUzI1NiJ9 is just the header of a JWT",
        "test_find_secrets_reports_exact_ranges_for_pem_blocks failed on CI",
        "token_hash: " + rs(r, 64, HEX), "password_hash: $2b$12$" + rs(r, 53, B62 + "./"),
        "api_key_id: " + rs(r, 20, HEX), "- Passwords: 3 rotated, 2 pending", "token: \"{{ .Values.token }}\"",
        "Stripe test keys start with " + P["sktest"] + " and live keys with " + P["sklive"],
        "color: #a1b2c3; background: #" + rs(r, 6, HEX), "- key: password", "secretKeyRef:",
        "- [GitHub tokens](https://github.com/settings/tokens/new?scopes=repo,workflow)",
        "Build " + rs(r, 40, HEX) + " deployed to prod-eu-west-1-cluster-blue-green-canary",
        "thumbnail_" + rs(r, 24, string.ascii_lowercase + string.digits) + ".png",
        "Webpack chunk main." + rs(r, 20, HEX) + ".js is 2 MB", "Our API keys rotate on the 1st; see the vault.",
        "密钥轮换：每季度一次，由安全组负责。", "口令：见 1Password 的 “生产数据库” 条目",
    ])
    return [line.replace("{", "{{").replace("}", "}}")], None


NEGATIVES = {
    "placeholder": n_placeholder, "git SHA": n_git_sha, "UUID": n_uuid, "named hash": n_named_hash,
    "file path": n_path, "ordinary URL": n_url, "data URI": n_data_uri, "version": n_version,
    "semantic words": n_semantic, "documented example": n_example, "public key / certificate": n_public_material,
    "ids and prose": n_ids,
}


# --------------------------------------------------------------------------------------------
# Background prose
# --------------------------------------------------------------------------------------------

EN = [
    "We moved the billing service to the new cluster on Tuesday; latency dropped by a third.",
    "Keep the summary short: three to six bullets, each one a fact someone will need later.",
    "The key insight was that retries, not timeouts, caused the duplicate charges.",
    "Refresh tokens expire after 30 days, so the nightly job re-authenticates on Mondays.",
    "Passwords for shared accounts live in the team vault; never paste them here.",
    "The API gateway rate-limits at 100 requests per second per token.",
    "Ada prefers squash merges and short commit messages in the imperative mood.",
    "Run the migration with `make migrate` and check the dashboard afterwards.",
    "If the deploy fails with a 403, the token has probably been rotated.",
    "Our on-call rotation changes every Monday at 09:00 UTC.",
    "The secret to fast builds turned out to be caching the wheel directory.",
    "Use `git log --oneline -n 20` to find the last release tag.",
    "See [the runbook](../runbooks/deploy.md) for the rollback steps.",
    "The keyboard shortcut for the command palette is Ctrl+Shift+P.",
    "Monkey-patching the client in tests hides real bugs; prefer a fake server.",
    "SSO uses OAuth2 with PKCE; the client id is public, the secret is not stored here.",
    "Lin asked for the quarterly report by Friday, with the cost breakdown per team.",
    "Latency p95 is 180 ms; the budget is 250 ms.",
    "Password rotation is enforced by the identity provider every 90 days.",
    "We decided against storing API keys in environment files committed to the repo.",
]
ZH = [
    "周二把账单服务迁到了新集群，延迟降低了三分之一。",
    "摘要要短：三到六条，每条都是以后用得上的事实。",
    "密码统一放在团队的密码管理器里，不要写进笔记。",
    "令牌每 30 天过期一次，夜间任务会在周一重新认证。",
    "部署失败并返回 403 时，多半是令牌被轮换了。",
    "值班表每周一上午九点（UTC）交接。",
    "关键在于重试而不是超时导致了重复扣款。",
    "先运行 `make migrate`，然后检查监控面板。",
    "回滚步骤见 [运维手册](../runbooks/deploy.md)。",
    "林希望周五前拿到季度报告，并按团队拆分成本。",
    "接口网关按每个令牌每秒 100 次请求限流。",
    "密钥轮换由身份提供方每 90 天强制执行一次。",
]
CODE = [
    ["```python", "def retry(fn, attempts=3):", "    for i in range(attempts):", "        try:", "            return fn()",
     "        except TimeoutError:", "            time.sleep(2 ** i)", "```"],
    ["```bash", "kubectl -n billing rollout restart deploy/api", "kubectl -n billing get pods -w", "```"],
    ["```yaml", "replicas: 3", "resources:", "  limits:", "    memory: 512Mi", "token_ttl: 3600", "```"],
    ["```json", "{\"name\": \"pmem\", \"version\": \"0.1.0\", \"private\": true}", "```"],
    ["| Step | Owner | Status |", "|---|---|---|", "| migrate | Lin | done |", "| rotate keys | Ada | pending |"],
    ["- [Design doc](https://docs.internal.test/design/billing-v2)", "- [Dashboard](https://grafana.internal.test/d/billing)"],
]
TITLES = ["Billing migration", "Deploy notes", "Team preferences", "API credentials audit", "账单服务迁移",
          "Onboarding checklist", "Incident 2025-03-14", "项目备忘", "Release process", "Home lab"]


@dataclass
class Planted:
    kind: str
    positive: bool
    line: int
    start: int
    end_line: int
    end: int
    value: str


@dataclass
class Note:
    name: str
    lines: list[str] = field(default_factory=list)
    planted: list[Planted] = field(default_factory=list)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def add(self, ctx: list[str], value: str | None, kind: str, positive: bool, fill: dict | None = None,
            more: list[tuple[str, str, str]] = ()) -> None:
        """Append a context; plant `value` where `{v}` is (and each `{name}` of `more`)."""
        fill = dict(fill or {})
        base = len(self.lines)
        for i, tmpl in enumerate(ctx):
            line = tmpl
            spans = []
            for key, val, k in ([("v", value, kind)] if value is not None else []) + list(more):
                if "{" + key + "}" in line:
                    spans.append((key, val, k))
            if spans:
                # Fill the other names, keep the markers, then cut at each marker.
                keep = {s[0]: "\x00" + s[0] + "\x00" for s in spans}
                line = line.format(**fill, **keep)
                spans.sort(key=lambda sp: line.index("\x00" + sp[0] + "\x00"))  # left to right
                for key, val, k in spans:
                    tag = "\x00" + key + "\x00"
                    pos = line.index(tag)
                    line = line.replace(tag, val, 1)
                    self.planted.append(Planted(k, k in KIND_SET, base + i, pos, base + i, pos + len(val), val))
                self.lines.append(line)
            else:
                self.lines.append(line.format(**fill) if ("{" in line and fill) or "{{" in line else line)


KIND_SET = set(TOKENS) | set(GENERIC) | {"PEM private key", "PGP private key", "Google service-account private key",
                                         "URL password", "database URL password"}


def _prose(r: random.Random, note: Note, n: int, zh: bool) -> None:
    for _ in range(n):
        x = r.random()
        if x < 0.15:
            note.lines += [""] + r.choice(CODE) + [""]
        elif x < 0.25:
            note.lines += ["", "## " + r.choice(["Context", "Decisions", "Open questions", "背景", "决定", "Links"]), ""]
        else:
            note.lines.append(r.choice(ZH if zh and r.random() < 0.7 else EN))


def _new_note(r: random.Random, idx: int) -> tuple[Note, bool]:
    zh = r.random() < 0.35
    note = Note(f"note-{idx:04d}.md")
    note.lines += ["# " + r.choice(TITLES), "", "Updated: 2025-0" + str(r.randint(1, 9)) + "-1" + str(r.randint(0, 9)), "",
                   "## " + ("摘要" if zh else "Summary")]
    note.lines += ["- " + r.choice(ZH if zh else EN) for _ in range(r.randint(3, 5))]
    note.lines.append("")
    return note, zh


def _plant_positive(r: random.Random, note: Note, kind: str) -> None:
    fill = {"n": r.randint(1, 99)}
    if kind in TOKENS:
        name, zh, env = TOKEN_NAMES[kind]
        fill.update(name=name, zh=zh, env=env, envl=env.lower())
        if kind == "Azure storage account key":
            ctxs = SPECIAL_CONTEXTS[kind]
        elif kind == "AWS secret access key":  # no structure of its own: only where it is named
            ctxs = SPECIAL_CONTEXTS[kind] + [TOKEN_CONTEXTS[i] for i in (0, 1, 2, 3, 6, 8, 9)]
        else:
            ctxs = SPECIAL_CONTEXTS.get(kind, []) + TOKEN_CONTEXTS
        ctx = r.choice(ctxs)
        value = TOKENS[kind](r)
        more = []
        if any("{id}" in c for c in ctx):
            more = [("id", v_aws_id(r), "AWS access key id")]
        note.add(ctx, value, kind, True, fill, more)
    elif kind in GENERIC:
        keys, gen = GENERIC[kind]
        k = r.choice(keys)
        ascii_key = k.isascii()
        ctxs = GENERIC_CONTEXTS if ascii_key else [c for c in GENERIC_CONTEXTS if "{K}" not in c[0] and "{K}" not in "".join(c)]
        ctx = r.choice(ctxs)
        if kind == "password" and r.random() < 0.08:
            ctx = CLI_PASSWORD
        fill.update(k=k, K=k.upper().replace(" ", "_").replace("-", "_"), kl=k.lower().replace(" ", "_"))
        value = gen(r).lstrip("=")
        if any("?{kl}=" in c for c in ctx):  # in a URL query the value is percent-encoded
            value = urllib.parse.quote(value, safe="")
        elif any(";{K}=" in c for c in ctx):  # connection string: no ";" in values
            value = value.replace(";", "")
        note.add(ctx, value, kind, True, fill)
    elif kind in ("PEM private key", "PGP private key"):
        lines, first, last = pgp_block(r) if kind == "PGP private key" else pem_block(r, r.choice(PEM_LABELS))
        indent = r.choice(["", "", "    ", "> "])
        lines = [indent + x if x else x for x in lines]
        fence = r.random() < 0.6
        base = len(note.lines) + (1 if fence else 0)
        note.lines += (["```"] if fence else []) + lines + (["```"] if fence else [])
        start = len(indent)
        value = "\n".join([lines[first][start:], *lines[first + 1:last + 1]])
        note.planted.append(Planted(kind, True, base + first, start, base + last, len(lines[last]), value))
    elif kind == "Google service-account private key":
        line, a, b, chunks = sa_json_line(r)
        base = len(note.lines) + 1
        note.lines += ["```json", "{", '  "type": "service_account",', '  "project_id": "billing-prod-' + str(r.randint(100, 999)) + '",',
                       '  "private_key_id": "' + rs(r, 40, HEX) + '",', line,
                       '  "client_email": "deploy@billing-prod.iam.gserviceaccount.com"', "}", "```"]
        note.planted.append(Planted(kind, True, base + 4, a, base + 4, b, chunks))
    elif kind in ("URL password", "database URL password"):
        pw = v_url_password(r)
        if kind == "URL password":
            scheme = r.choice(["https", "http", "ftp", "amqp" if False else "https"])
            url_pre = scheme + "://" + r.choice(["deploy", "lin", "ci-bot", "admin"]) + ":"
            url_post = "@" + r.choice(["git.internal.test/infra/deploy.git", "files.internal.test/drop/", "registry.internal.test"])
        else:
            scheme = r.choice(["postgres", "postgresql", "mysql", "mongodb+srv", "redis", "rediss", "amqp"])
            user = "" if scheme.startswith("redis") and r.random() < 0.5 else r.choice(["app", "billing", "root", "svc_ro"])
            url_pre = scheme + "://" + user + ":"
            url_post = "@" + r.choice(["db.internal.test:5432/billing", "cluster0.ab12c.mongodb.net/app?retryWrites=true",
                                        "cache.internal.test:6379/0", "10.0.3.7:3306/shop"])
        ctx = r.choice([["DATABASE_URL={v}"], ["- conn: `{v}`"], ["连接串：{v}"], ["[{n}]({v})"], ["url: \"{v}\""],
                        ["Clone with {v} for now."]])
        url = url_pre + "\x01" + url_post
        fill["n"] = "mirror"
        # plant the password only
        tmpl = ctx[0]
        pre, post = tmpl.split("{v}")
        pre = pre.format(**fill)
        post = post.format(**fill)
        line = pre + url.replace("\x01", pw) + post
        pos = len(pre) + len(url_pre)
        note.planted.append(Planted(kind, True, len(note.lines), pos, len(note.lines), pos + len(pw), pw))
        note.lines.append(line)
    else:
        raise ValueError(kind)


POSITIVE_KINDS = list(TOKENS) + ["PEM private key", "PGP private key", "Google service-account private key",
                                  "URL password", "database URL password"] + list(GENERIC)


def generate(seed: int = 401, per_kind: int = 30, neg_per_kind: int = 40) -> list[Note]:
    """The labelled set: notes with planted positives (`per_kind` of each kind) and negatives."""
    r = random.Random(seed)
    items = [("+", k) for k in POSITIVE_KINDS for _ in range(per_kind)]
    items += [("-", k) for k in NEGATIVES for _ in range(neg_per_kind)]
    r.shuffle(items)
    notes = []
    i = 0
    while i < len(items):
        note, zh = _new_note(r, len(notes))
        for sign, kind in items[i:i + r.randint(3, 7)]:
            i += 1
            _prose(r, note, r.randint(1, 4), zh)
            note.lines.append("")
            if sign == "+":
                _plant_positive(r, note, kind)
            else:
                ctx, value = NEGATIVES[kind](r)
                note.add(ctx, value, kind, False)
                if value is None:  # the whole context is the negative
                    top = len(note.lines) - 1
                    first = top - len(ctx) + 1
                    note.planted.append(Planted(kind, False, first, 0, top, len(note.lines[top]), ""))
            note.lines.append("")
        _prose(r, note, r.randint(2, 6), zh)
        notes.append(note)
    return notes


# --------------------------------------------------------------------------------------------
# Scoring
# --------------------------------------------------------------------------------------------

def _offsets(lines: list[str]) -> list[int]:
    out, pos = [], 0
    for line in lines:
        out.append(pos)
        pos += len(line) + 1
    return out


@dataclass
class Score:
    found: Counter = field(default_factory=Counter)
    exact: Counter = field(default_factory=Counter)
    kind_ok: Counter = field(default_factory=Counter)
    planted: Counter = field(default_factory=Counter)
    reported: Counter = field(default_factory=Counter)  # by reported kind
    correct: Counter = field(default_factory=Counter)  # by reported kind
    fp_by_category: Counter = field(default_factory=Counter)
    neg_planted: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    nbytes: int = 0
    misses: list = field(default_factory=list)
    false_positives: list = field(default_factory=list)

    @property
    def recall(self) -> float:
        return sum(self.found.values()) / max(1, sum(self.planted.values()))

    @property
    def precision(self) -> float:
        return sum(self.correct.values()) / max(1, sum(self.reported.values()))


def score(notes: list[Note], detect) -> Score:
    """`detect(note) -> [(line, start, end_line, end, kind)]`."""
    s = Score()
    for note in notes:
        offs = _offsets(note.lines)
        t0 = time.perf_counter()
        found = detect(note)
        s.seconds += time.perf_counter() - t0
        s.nbytes += len(note.text().encode())
        spans = [(offs[a] + b, offs[c] + d, kind) for a, b, c, d, kind in found]
        pos = [(offs[p.line] + p.start, offs[p.end_line] + p.end, p) for p in note.planted if p.positive]
        neg = [(offs[p.line] + p.start, offs[p.end_line] + p.end, p) for p in note.planted if not p.positive]
        for lo, hi, p in pos:
            s.planted[p.kind] += 1
            hits = [(a, b, k) for a, b, k in spans if a < hi and lo < b]
            if hits:
                s.found[p.kind] += 1
                s.exact[p.kind] += any(a == lo and b == hi for a, b, _ in hits)
                s.kind_ok[p.kind] += any(k == p.kind for _, _, k in hits)
            else:
                s.misses.append((note.name, p.kind, p.line))
        for p in (p for _, _, p in neg):
            s.neg_planted[p.kind] += 1
        for a, b, k in spans:
            s.reported[k] += 1
            if any(a < hi and lo < b for lo, hi, _ in pos):
                s.correct[k] += 1
            else:
                cats = [p.kind for lo, hi, p in neg if a < hi and lo <= b]
                cat = cats[0] if cats else "background"
                s.fp_by_category[cat] += 1
                s.false_positives.append((note.name, cat, k, note.lines[_line_of(offs, a)]))
    return s


def _line_of(offs: list[int], pos: int) -> int:
    import bisect
    return bisect.bisect_right(offs, pos) - 1


def ours(note: Note):
    from pmem_lsp.engine.secrets import find_secrets
    return [(m.line, m.start, m.end_line, m.end, m.kind) for m in find_secrets(note.lines, in_sentences=False)]


def detect_secrets_runner(tmpdir: Path):
    """detect-secrets with its default plugins and filters, one file per note."""
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    def run(note: Note):
        path = tmpdir / note.name
        path.write_text(note.text(), encoding="utf-8")
        coll = SecretsCollection()
        with default_settings():
            coll.scan_file(str(path))
        out = []
        for _file, secret in coll:
            ln = secret.line_number - 1
            line = note.lines[ln] if 0 <= ln < len(note.lines) else ""
            val = secret.secret_value or ""
            i = line.find(val) if val else -1
            if secret.type == "Private Key":
                # It flags the BEGIN line; credit it with the key material that follows.
                last = min(len(note.lines) - 1, ln + 4)
                out.append((ln, 0, last, len(note.lines[last]), secret.type))
            elif i >= 0:
                out.append((ln, i, ln, i + len(val), secret.type))
            else:
                out.append((ln, 0, ln, len(line), secret.type))
        return out

    return run


def report(name: str, s: Score, per_kind: bool = True, out=sys.stdout) -> None:
    w = out.write
    per20 = s.seconds / max(1, s.nbytes) * 20480 * 1000
    w(f"\n== {name}: recall {s.recall:.3f}  precision {s.precision:.3f}  "
      f"({sum(s.found.values())}/{sum(s.planted.values())} found, "
      f"{sum(s.reported.values()) - sum(s.correct.values())} false positives; "
      f"{s.seconds * 1000:.0f} ms total, {per20:.3f} ms per 20 KB)\n")
    if not per_kind:
        return
    w(f"{'positive kind':38} {'n':>4} {'recall':>7} {'exact':>6} {'kind':>6} {'precision':>9}\n")
    for k in POSITIVE_KINDS:
        n = s.planted[k]
        f = s.found[k]
        prec = s.correct[k] / s.reported[k] if s.reported[k] else float("nan")
        w(f"{k:38} {n:>4} {f / max(1, n):>7.3f} {s.exact[k] / max(1, f):>6.2f} {s.kind_ok[k] / max(1, f):>6.2f} {prec:>9.3f}\n")
    other = sorted(set(s.reported) - set(POSITIVE_KINDS))
    for k in other:
        w(f"{'(reported as) ' + k:38} {'':>4} {'':>7} {'':>6} {'':>6} {s.correct[k] / s.reported[k]:>9.3f}  ({s.reported[k]} reported)\n")
    w(f"{'negative category':38} {'n':>4} {'false positives':>16}\n")
    for k in list(NEGATIVES) + ["background"]:
        w(f"{k:38} {s.neg_planted[k] if k in NEGATIVES else '':>4} {s.fp_by_category[k]:>16}\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=401)
    ap.add_argument("--per-kind", type=int, default=30)
    ap.add_argument("--neg-per-kind", type=int, default=40)
    ap.add_argument("--no-detect-secrets", action="store_true")
    ap.add_argument("--show", type=int, default=10, help="misses and false positives to list (kinds and lines only)")
    ap.add_argument("--verbose", action="store_true", help="show the lines of false positives")
    ap.add_argument("--dump", type=Path, help="write the notes to this folder")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

    notes = generate(args.seed, args.per_kind, args.neg_per_kind)
    total = sum(len(n.text().encode()) for n in notes)
    print(f"{len(notes)} notes, {total / 1024:.0f} KB, "
          f"{sum(p.positive for n in notes for p in n.planted)} positives, "
          f"{sum(not p.positive for n in notes for p in n.planted)} negatives (seed {args.seed})")
    if args.dump:
        args.dump.mkdir(parents=True, exist_ok=True)
        for n in notes:
            (args.dump / n.name).write_text(n.text(), encoding="utf-8")

    s = score(notes, ours)
    report("pmem-lsp PM401", s)
    for name, kind, line in s.misses[: args.show]:
        print(f"  miss: {name}:{line + 1} {kind}")
    for name, cat, kind, line in s.false_positives[: args.show]:
        # The lines are generated negatives (no planted secret), safe to show with --verbose.
        print(f"  false positive: {name} [{cat}] reported as {kind}" + (f": {line}" if args.verbose else ""))

    if not args.no_detect_secrets:
        try:
            import detect_secrets  # noqa: F401
        except ImportError:
            print("\n(detect-secrets is not installed: `pip install detect-secrets` to compare)")
        else:
            import tempfile
            with tempfile.TemporaryDirectory() as tmp:
                ds = score(notes, detect_secrets_runner(Path(tmp)))
            ds.reported = Counter({"(any)": sum(ds.reported.values())})
            ds.correct = Counter({"(any)": sum(ds.correct.values())})
            from importlib.metadata import version
            report("detect-secrets " + version("detect-secrets"), ds, per_kind=False)
            print(f"{'kind':38} {'ours':>6} {'detect-secrets':>15}")
            for k in POSITIVE_KINDS:
                print(f"{k:38} {s.found[k] / max(1, s.planted[k]):>6.3f} {ds.found[k] / max(1, ds.planted[k]):>15.3f}")
            print(f"{'negative category (false positives)':38} {'ours':>6} {'detect-secrets':>15}")
            for k in list(NEGATIVES) + ["background"]:
                print(f"{k:38} {s.fp_by_category[k]:>6} {ds.fp_by_category[k]:>15}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
