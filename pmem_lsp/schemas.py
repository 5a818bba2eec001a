"""JSON Schemas generated from the pydantic models; `schemas/*.json` are their committed copies."""

from __future__ import annotations

import json

from .engine.report_schema import CheckReport
from .engine.settings import Settings

SCHEMA_FILES = {
    "settings": "settings.schema.json",
    "report": "check-report.schema.json",
}


def schema(name: str) -> dict:
    if name == "settings":
        data = Settings.model_json_schema(by_alias=True)
        data["title"] = "pmem settings"
    elif name == "report":
        data = CheckReport.model_json_schema(by_alias=True)
    else:
        raise KeyError(name)
    data["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return data


def schema_text(name: str) -> str:
    return json.dumps(schema(name), indent=2, ensure_ascii=False, sort_keys=True) + "\n"
