#!/usr/bin/env python3
"""Reads chat-style optimization trajectories (../shared/formats/trajectories.md, the
kernelstrain2 shape) as a trainer would: every field the format names, with the format's types,
and nothing of blaster's own (the `blaster_*` keys and the extra trace fields beside the
format's are ignored, as the format allows). A row that breaks the format raises ValueError
naming the line and the field.

    python3 scripts/kernelstrain2_reader.py trajectories.jsonl   # prints one summary per session
"""

import json
import re
import sys

STATUSES = {"ok", "compileerror", "wrongresult"}
ROLES = {"system", "user", "assistant"}


def _need(row, key, types, where):
    if not isinstance(row, dict) or key not in row:
        raise ValueError(f"{where}: no '{key}'")
    value = row[key]
    allowed = types if isinstance(types, tuple) else (types,)
    # JSON's true is no number: Python's bool is an int, so it is refused by name.
    if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
        raise ValueError(f"{where}: '{key}' is {type(value).__name__}, not {types}")
    return value


def read_session(row, where):
    """One session as (messages, trace), checked against the format."""
    if not isinstance(row, dict):
        raise ValueError(f"{where}: not an object")
    number = (int, float)
    for key in ("op", "gpu", "arch", "dtype", "signature", "desc", "elapsed_hms"):
        _need(row, key, str, where)
    if _need(row, "impl", str, where) not in ("cuda", "triton"):
        raise ValueError(f"{where}: impl is {row['impl']!r}")
    _need(row, "shape", (dict, str), where)
    if row.get("baseline_ms") is not None:
        _need(row, "baseline_ms", number, where)
    if not re.fullmatch(r"\d+:\d\d:\d\d", row["elapsed_hms"]):
        raise ValueError(f"{where}: elapsed_hms is {row['elapsed_hms']!r}")
    _need(row, "elapsed_s", number, where)
    attempts = _need(row, "attempts", int, where)
    steps = _need(row, "num_steps", int, where)
    best = row.get("best")
    if best is not None:
        for key in ("step", "time_ms", "speedup"):
            _need(best, key, number, f"{where} best")
    messages = _need(row, "messages", list, where)
    if len(messages) < 2 or messages[0].get("role") != "system" or messages[1].get("role") != "user":
        raise ValueError(f"{where}: messages do not open with a system turn, then a user turn")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ROLES or not isinstance(
                m.get("content"), str):
            raise ValueError(f"{where}: messages[{i}] is not a {{role, content}} turn")
        if i > 1 and m["role"] == messages[i - 1]["role"]:
            raise ValueError(f"{where}: messages[{i}] does not alternate")
    trace = _need(row, "trace", list, where)
    if len(trace) != steps or attempts != steps:
        raise ValueError(f"{where}: {len(trace)} trace entries, num_steps {steps}, "
                         f"attempts {attempts}")
    for i, t in enumerate(trace):
        at = f"{where} trace[{i}]"
        for key in ("tag", "kind", "status"):
            _need(t, key, str, at)
        if t["status"] not in STATUSES:
            raise ValueError(f"{at}: status {t['status']!r}")
        params = _need(t, "params", dict, at)
        for name, value in params.items():
            if not isinstance(value, (int, float, str)) or isinstance(value, bool):
                raise ValueError(f"{at}: params[{name!r}] is {value!r}")
        _need(t, "kept", bool, at)
        if t["status"] == "ok":
            _need(t, "time", number, at)
    return messages, trace


def read(path):
    """Every session of a trajectories.jsonl file."""
    sessions = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            sessions.append(read_session(json.loads(line), f"{path}:{number}"))
    return sessions


if __name__ == "__main__":
    for file in sys.argv[1:]:
        for messages, trace in read(file):
            statuses = ",".join(t["status"] for t in trace)
            print(f"{file}: {len(messages)} turns, {len(trace)} steps ({statuses})")
