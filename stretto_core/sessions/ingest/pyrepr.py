"""Reading a Python repr without running it: WorkBench stores LangChain steps as `repr(dict)`.

`full_response` is `{'input': ..., 'output': ..., 'intermediate_steps': [(AgentAction(tool=...,
tool_input=..., log=...), observation), ...]}`. It is parsed with `ast.parse` and walked: an
`AgentAction(...)` call gives its keywords, each read with `ast.literal_eval`, and everything else
is read with `ast.literal_eval` too. Nothing is ever evaluated. Some observations hold values a
literal cannot (`array([...], dtype=object)`, `Timestamp('...')`, `nan`); those are read leniently
(the array's items, the timestamp's text, None), and the observation's text is its source as
recorded, which is exactly the `str()` the agent was shown.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any

ACTION_NAMES = frozenset({"AgentAction", "AgentActionMessageLog", "AgentStep"})


class ReprError(ValueError):
    """The text is not the repr of an agent run; `line` is the line within the text, when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@dataclass
class Step:
    """One intermediate step: the action's keywords and what the tool returned."""

    action: dict[str, Any]
    observation: Any
    observation_text: str
    lenient: bool = False


@dataclass
class AgentRun:
    input: Any
    output: Any
    steps: list[Step]


class _Source:
    """Slices of the source text by node position (positions are UTF-8 byte offsets)."""

    def __init__(self, text: str) -> None:
        self.data = text.encode("utf-8")
        self.starts = [0]
        at = self.data.find(b"\n")
        while at >= 0:
            self.starts.append(at + 1)
            at = self.data.find(b"\n", at + 1)

    def segment(self, node: ast.AST) -> str:
        start = self.starts[node.lineno - 1] + node.col_offset  # type: ignore[attr-defined]
        end = self.starts[node.end_lineno - 1] + node.end_col_offset  # type: ignore[attr-defined]
        return self.data[start:end].decode("utf-8", errors="replace")


def parse_agent_run(text: str) -> AgentRun:
    """The steps of a LangChain agent run's repr; ReprError when it is not one."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ReprError(f"not a Python repr: {exc.msg}", exc.lineno) from exc
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ReprError(f"not a Python repr: {type(exc).__name__}") from exc
    root = tree.body
    if not isinstance(root, ast.Dict):
        raise ReprError("not the repr of a dict")
    source = _Source(text.strip())
    fields: dict[str, ast.expr] = {}
    for key, value in zip(root.keys, root.values):
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            fields[key.value] = value
    if "intermediate_steps" not in fields:
        raise ReprError("no `intermediate_steps` in the agent run")
    steps_node = fields["intermediate_steps"]
    if not isinstance(steps_node, (ast.List, ast.Tuple)):
        raise ReprError("`intermediate_steps` is not a list", getattr(steps_node, "lineno", None))
    steps = [_step(node, i, source) for i, node in enumerate(steps_node.elts)]
    return AgentRun(input=_plain(fields.get("input")), output=_plain(fields.get("output")), steps=steps)


def _step(node: ast.expr, index: int, source: _Source) -> Step:
    if not isinstance(node, (ast.Tuple, ast.List)) or len(node.elts) != 2:
        raise ReprError(f"step {index} is not an (action, observation) pair", getattr(node, "lineno", None))
    action_node, obs_node = node.elts
    if not (isinstance(action_node, ast.Call) and _call_name(action_node) in ACTION_NAMES):
        raise ReprError(f"step {index}: the action is not an AgentAction(...)", action_node.lineno)
    action: dict[str, Any] = {}
    for keyword in action_node.keywords:
        if keyword.arg is None:
            raise ReprError(f"step {index}: AgentAction(**...) cannot be read", action_node.lineno)
        try:
            action[keyword.arg] = ast.literal_eval(keyword.value)
        except (ValueError, TypeError, SyntaxError, RecursionError) as exc:
            raise ReprError(f"step {index}: AgentAction {keyword.arg}= is not a literal ({exc})",
                            keyword.value.lineno) from exc
    try:
        observation, lenient = ast.literal_eval(obs_node), False
    except (ValueError, TypeError, SyntaxError, RecursionError):
        observation, lenient = _lenient(obs_node, source), True
    text = observation if isinstance(observation, str) else _shown(obs_node, observation, source)
    return Step(action=action, observation=observation, observation_text=text, lenient=lenient)


def _shown(node: ast.expr, value: Any, source: _Source) -> str:
    """The text the agent was shown, `str(observation)`: the repr as recorded, except for a numpy array.

    A container's `str` is its repr, but a bare numpy array prints as `['a' 'b']`, so it is rebuilt
    from its items (data only, nothing evaluated) and printed as numpy prints it.
    """
    recorded = source.segment(node)
    if not (isinstance(node, ast.Call) and _call_name(node) == "array" and isinstance(value, list)):
        return recorded
    dtype: Any = None
    for keyword in node.keywords:
        if keyword.arg == "dtype":
            dtype = keyword.value.id if isinstance(keyword.value, ast.Name) else _plain(keyword.value)
    try:
        import numpy

        return str(numpy.array(value, dtype=object if dtype == "object" else dtype))
    except (ImportError, TypeError, ValueError):
        return recorded


def _plain(node: ast.expr | None) -> Any:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return None


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _lenient(node: ast.expr, source: _Source) -> Any:
    """A value for a node literal_eval refused: containers walked, known objects read, the rest as text."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Dict):
        return {_key(_lenient(k, source) if k is not None else None): _lenient(v, source)
                for k, v in zip(node.keys, node.values)}
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_lenient(e, source) for e in node.elts]
    if isinstance(node, ast.Name):
        return None if node.id in ("nan", "NaN", "NaT", "inf") else node.id
    if isinstance(node, ast.Call):
        name = _call_name(node)
        if name == "array" and node.args:
            return _lenient(node.args[0], source)
        if name in ("Timestamp", "datetime", "date", "Decimal") and len(node.args) == 1:
            inner = _lenient(node.args[0], source)
            if isinstance(inner, str):
                return inner
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return source.segment(node)
    return value


def _key(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)


def jsonable(value: Any) -> Any:
    """The value as JSON data (tuples as lists, keys as text, non-finite numbers as None)."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    return str(value)
