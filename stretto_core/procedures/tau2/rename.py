"""Customers no trace saw: the telecom database and a task with every identifier renamed.

Every training task is about one customer (John Smith, 555-123-2002, C1001, line L1002), so a
procedure whose bindings were constants would pass them too. Renaming every customer, line,
device, bill and plan id, phone number, name, email and IMEI, consistently in the database, the
ticket, the initial state and the evaluation criteria, gives the same tasks for customers whose
identifiers appear in no trace: only bindings by provenance carry to them.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from stretto_core.procedures.tau2.env import tau2_module

ID_PATTERN = re.compile(r"(?<![A-Za-z0-9])[CLDBP]\d{4,}(?![A-Za-z0-9])")
PHONE_PATTERN = re.compile(r"(?<![\d-])\d{3}-\d{3}-\d{4}(?![\d-])")
IMEI_PATTERN = re.compile(r"(?<!\d)\d{15}(?!\d)")

FIRST = ["Maria", "Kenji", "Amara", "Lukas", "Priya", "Diego", "Ingrid", "Tomasz", "Aylin", "Noah"]
LAST = ["Okafor", "Lindqvist", "Moreau", "Tanaka", "Haddad", "Novak", "Ferreira", "Kowalski", "Adeyemi", "Brandt"]


def _db_text() -> str:
    utils = tau2_module("tau2.domains.telecom.utils")
    db = tau2_module("tau2.domains.telecom.data_model").TelecomDB.load(utils.TELECOM_DB_PATH)
    return db.model_dump_json()


def renaming(seed: int = 7, extra_text: str = "") -> dict[str, str]:
    """A consistent map from every identifier in the database (and `extra_text`) to a new one."""
    rng = random.Random(seed)
    text = _db_text() + extra_text
    data = json.loads(_db_text())
    mapping: dict[str, str] = {}
    used: set[str] = set(ID_PATTERN.findall(text)) | set(PHONE_PATTERN.findall(text))

    def fresh(make) -> str:
        while True:
            candidate = make()
            if candidate not in used:
                used.add(candidate)
                return candidate

    for old in sorted(set(ID_PATTERN.findall(text))):
        mapping[old] = fresh(lambda: old[0] + "".join(rng.choice("0123456789") for _ in range(len(old) - 1)))
    for old in sorted(set(PHONE_PATTERN.findall(text))):
        mapping[old] = fresh(lambda: f"{rng.randint(200, 989)}-{rng.randint(200, 989)}-{rng.randint(1000, 9999)}")
    for old in sorted(set(IMEI_PATTERN.findall(text))):
        mapping[old] = fresh(lambda: "".join(rng.choice("0123456789") for _ in range(15)))
    names = sorted({c["full_name"] for c in data.get("customers", []) if c.get("full_name")})
    pool = [f"{f} {l}" for f in FIRST for l in LAST]
    rng.shuffle(pool)
    for old, new in zip(names, pool):
        mapping[old] = new
        old_first, old_last = old.split(" ", 1)
        new_first, new_last = new.split(" ", 1)
        mapping[f"{old_first.lower()}.{old_last.lower()}"] = f"{new_first.lower()}.{new_last.lower()}"
    return mapping


def apply(text: str, mapping: dict[str, str]) -> str:
    """Replace every mapped identifier where it stands alone (not inside a longer token)."""
    keys = sorted(mapping, key=len, reverse=True)
    pattern = re.compile("(?<![A-Za-z0-9])(" + "|".join(re.escape(k) for k in keys) + ")(?![A-Za-z0-9])")
    return pattern.sub(lambda m: mapping[m.group(1)], text)


def renamed_db(mapping: dict[str, str]) -> Any:
    """The telecom database with every identifier renamed."""
    model = tau2_module("tau2.domains.telecom.data_model").TelecomDB
    return model.model_validate_json(apply(_db_text(), mapping))


def renamed_task(task: Any, mapping: dict[str, str]) -> Any:
    """A task with its ticket, initial state and evaluation criteria renamed (the id kept)."""
    model = type(task)
    data = json.loads(task.model_dump_json())
    task_id = data["id"]
    renamed = json.loads(apply(json.dumps(data), mapping))
    renamed["id"] = task_id
    return model.model_validate(renamed)
