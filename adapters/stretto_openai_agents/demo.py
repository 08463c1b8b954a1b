"""The demo's agent in the OpenAI Agents SDK, served by stretto's one line.

The scripted agent sits in the model slot as the SDK's own `agents.testing.ScriptedModel`: each
model call asks it for its next turn, given the tool outputs the SDK put into the model's input
since its previous call (stretto's appended lookups included). The shop's tools are
`FunctionTool`s reading the customer's shop from the run context. Each customer message is one
`Runner.run` of one conversation (the next run's input is the last run's `to_input_list()` and
the customer's message). stretto serves the agent as it serves any:

    agent = instrument(agent, flow=flow, manifest=SHOP_MANIFEST, session_key="customer")

which records each conversation (`session_key` names it in the run context) as one session of
harness `openai-agents` and, given a flow, makes the lookups inside the tools' results. This module imports the SDK; `stretto demo` finds it through the `stretto.demo_harnesses` entry
point (the core names no adapter) and loads it only to run.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from agents import Agent, FunctionTool, RunConfig, Runner, __version__
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
from agents.usage import Usage as SDKUsage

from stretto_core.demo.agent import SupportAgent, new_customer
from stretto_core.demo.shop import SHOP_APP, SHOP_MANIFEST, Shop
from stretto_core.flow.ir import Flow
from stretto_core.progress import track
from stretto_openai_agents import instrument, runtime_of

HARNESS = "openai-agents"
NAME = f"the OpenAI Agents SDK (openai-agents {__version__})"
MAX_MODEL_CALLS = 64
"""Model calls one run may make (the SDK's default of 10 is less than a long order walk)."""


@dataclass
class CustomerContext:
    """The run context: which conversation this is, the customer's shop, which calls erred."""

    customer: str
    shop: Shop
    errors: dict[str, bool] = field(default_factory=dict)


def shop_tool(name: str) -> FunctionTool:
    """One shop tool as a `FunctionTool`; its parameters are the shop method's (all strings)."""
    method = getattr(Shop, f"_{name}")
    params = [p for p in inspect.signature(method).parameters if p != "self"]
    schema = {"type": "object", "properties": {p: {"type": "string"} for p in params},
              "required": params, "additionalProperties": False}

    async def on_invoke_tool(ctx: Any, input: str) -> str:
        text, error = ctx.context.shop.call(name, json.loads(input or "{}"))
        ctx.context.errors[ctx.tool_call_id] = error
        return text

    return FunctionTool(name=name, description=(method.__doc__ or name.replace("_", " ")).strip(),
                        params_json_schema=schema, on_invoke_tool=on_invoke_tool)


def shop_agent() -> Agent[CustomerContext]:
    """The support agent as the SDK knows it: instructions and the shop's tools (each customer
    talks to a clone of it with that customer's model)."""
    return Agent(name="shop-agent", instructions="Help the customer cancel an order.",
                 tools=[shop_tool(name) for name in SHOP_MANIFEST.tools])


def erred(ctx: Any, output: Any) -> bool:
    """For stretto's `error_results`: the shop's own error flag of that call."""
    return bool(ctx.context.errors.get(ctx.tool_call_id, False))


def agent_model(agent: SupportAgent) -> ScriptedModel:
    """The SDK's scripted model, each of whose steps is the agent's next turn. One step always
    waits in its script: the agent, not a count of steps, says when the conversation is over."""
    model = ScriptedModel([])
    seen: set[str] = set()

    def step(call: Any) -> ModelStep:
        model.enqueue(ModelStep.respond(step))
        new = []
        for item in call.input if isinstance(call.input, list) else ():
            if isinstance(item, dict) and item.get("type") == "function_call_output" \
                    and item["call_id"] not in seen:
                seen.add(item["call_id"])
                new.append(_text(item["output"]))
        turn = agent.next_turn(new)
        output: list[Any] = [assistant_message(turn.text)] if turn.text or not turn.calls else []
        output += [function_call(c.tool, c.arguments, call_id=c.call_id) for c in turn.calls]
        usage = SDKUsage(requests=1, input_tokens=turn.usage.input_tokens or 0,
                         output_tokens=turn.usage.output_tokens or 0)
        return ModelStep(output=output, usage=usage)

    model.enqueue(ModelStep.respond(step))
    return model


def _text(output: Any) -> str:
    if isinstance(output, str):
        return output
    return "\n".join(p.get("text", "") for p in output if isinstance(p, dict))


def serve_customers(folder: Path, customers: Iterable[int], tag: str, flow: Flow | None = None,
                    theta: float = 0.3, desc: str = "record") -> None:
    """Serve each customer (by index) once through the SDK, one session each in `folder`;
    `flow=None` records without lookups."""
    agent = instrument(shop_agent(), flow=flow, manifest=SHOP_MANIFEST, store=folder, app=SHOP_APP,
                       session_key="customer", error_results=erred, theta=theta)
    try:
        for index in track(list(customers), desc, unit="customer"):
            shop, brain = new_customer(index)
            asyncio.run(_conversation(agent, CustomerContext(f"demo-{tag}-{index:03d}", shop), brain))
    finally:
        runtime = runtime_of(agent)
        if runtime is not None:
            runtime.close()


async def _conversation(agent: Agent[CustomerContext], context: CustomerContext, brain: SupportAgent) -> None:
    talking = agent.clone(model=agent_model(brain))  # the same instrumented agent, this customer's model
    config = RunConfig(tracing_disabled=True)
    history: list[Any] = []
    while (text := brain.customer()) is not None:
        result = await Runner.run(talking, [*history, {"role": "user", "content": text}], context=context,
                                  run_config=config, max_turns=MAX_MODEL_CALLS)
        history = result.to_input_list()
