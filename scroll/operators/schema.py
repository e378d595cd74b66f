"""A small JSON-schema validator for `llm_map` replies, and the reply parser.

The subset (everything else is refused when the schema is given, so a schema never
silently means less than it says):

    type                  "object" | "array" | "string" | "integer" | "number" | "boolean" | "null",
                          or a list of them (integer excludes bool; number accepts integers)
    properties            {name: schema} for object members that are present
    required              [name, ...] members an object must have
    additionalProperties  false: no members beyond `properties` (true / absent: any)
    enum                  [value, ...] the value must equal one of them (1 == 1.0, True != 1)
    items                 schema every array element must match
    title, description    accepted and ignored

    check_schema(schema)          -> schema, or SchemaError saying which keyword is wrong
    validate(value, schema)       -> None, or SchemaError with the JSON path ("$.label: ...")
    parse_reply(text)             -> the JSON value in a model reply (fences, prose around it)
"""
from __future__ import annotations

import json
import re
from typing import Any

TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")
KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "enum", "items",
                      "title", "description"})
MAX_DEPTH = 32


class SchemaError(ValueError):
    """A schema outside the subset, or a value that does not match it."""


def check_schema(schema: Any, path: str = "$", depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise SchemaError(f"schema {path}: nested deeper than {MAX_DEPTH} levels")
    if not isinstance(schema, dict):
        raise SchemaError(f"schema {path}: must be an object (a dict), got {type(schema).__name__}")
    unknown = sorted(set(schema) - KEYWORDS)
    if unknown:
        raise SchemaError(f"schema {path}: unsupported keyword(s) {unknown}; supported: {sorted(KEYWORDS)}")
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not types or any(t not in TYPES for t in types):
            raise SchemaError(f"schema {path}: type must be one of {list(TYPES)} or a non-empty list of them, "
                              f"got {schema['type']!r}")
    if "properties" in schema:
        props = schema["properties"]
        if not isinstance(props, dict) or not all(isinstance(k, str) for k in props):
            raise SchemaError(f"schema {path}: properties must map names to schemas")
        for k, sub in props.items():
            check_schema(sub, f"{path}.{k}", depth + 1)
    if "required" in schema:
        req = schema["required"]
        if not isinstance(req, list) or not all(isinstance(k, str) for k in req):
            raise SchemaError(f"schema {path}: required must be a list of names")
    if "additionalProperties" in schema and not isinstance(schema["additionalProperties"], bool):
        raise SchemaError(f"schema {path}: additionalProperties must be true or false (schemas are not supported)")
    if "enum" in schema and (not isinstance(schema["enum"], list) or not schema["enum"]):
        raise SchemaError(f"schema {path}: enum must be a non-empty list")
    if "items" in schema:
        check_schema(schema["items"], f"{path}[]", depth + 1)
    return schema


def _is_type(value: Any, t: str) -> bool:
    if t == "object":
        return isinstance(value, dict)
    if t == "array":
        return isinstance(value, list)
    if t == "string":
        return isinstance(value, str)
    if t == "integer":
        return isinstance(value, int) and not isinstance(value, bool) or (
            isinstance(value, float) and value.is_integer())
    if t == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if t == "boolean":
        return isinstance(value, bool)
    return value is None  # null


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def validate(value: Any, schema: dict, path: str = "$") -> None:
    """Raise SchemaError naming the first mismatch (its JSON path and what was expected)."""
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is_type(value, t) for t in types):
            want = " or ".join(types)
            raise SchemaError(f"{path}: expected {want}, got {_kind(value)} {_short(value)}")
    if "enum" in schema and not any(_same(value, e) for e in schema["enum"]):
        raise SchemaError(f"{path}: {_short(value)} is not one of {schema['enum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        missing = [k for k in schema.get("required", []) if k not in value]
        if missing:
            raise SchemaError(f"{path}: missing required member(s) {missing}")
        if schema.get("additionalProperties") is False:
            extra = sorted(set(value) - set(props))
            if extra:
                raise SchemaError(f"{path}: member(s) {extra} are not allowed (allowed: {sorted(props)})")
        for k, sub in props.items():
            if k in value:
                validate(value[k], sub, f"{path}.{k}")
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            validate(v, schema["items"], f"{path}[{i}]")


def _kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number" if isinstance(value, (int, float)) else type(value).__name__)


def _short(value: Any) -> str:
    s = json.dumps(value, ensure_ascii=False)
    return s if len(s) <= 60 else s[:57] + "..."


_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n(.*?)```", re.S)


def parse_reply(text: str) -> Any:
    """The JSON value in a reply: the whole text, else a ```json fenced block, else the
    first object/array/string/number that parses from where it starts. SchemaError if none."""
    s = (text or "").strip()
    candidates = [s] + _FENCE.findall(s)
    for c in candidates:
        try:
            return json.loads(c.strip())
        except ValueError:
            pass
    dec = json.JSONDecoder()
    for m in re.finditer(r"[\[{\"]", s):
        try:
            return dec.raw_decode(s, m.start())[0]
        except ValueError:
            continue
    raise SchemaError(f"the reply is not JSON (it starts {s[:60]!r})" if s else "the reply is empty")
