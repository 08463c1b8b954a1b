"""stretto for the OpenAI Agents SDK: fewer model turns, one line.

    from stretto_openai_agents import instrument
    agent = instrument(agent, flow="retail.flow.json", reads=["get_order", "get_user"])
    result = await Runner.run(agent, "Where is my order #W123?")

After each tool call the agent makes, stretto makes the read-only lookups the flow predicts it
will make next (with the agent's own tools and context) and appends their results inside the
result the agent asked for. Sessions are recorded to `.stretto/sessions` (or `store=`), tagged
`openai-agents` and the agent's model.

Reads: a tool is looked up only if the flow marks it read and so does `reads=[...]`, a
`manifest=`, or the tool's MCP annotations (`readOnlyHint`); a tool of unknown kind never is,
nor is one that needs approval or has guardrails.

Sessions: each `Runner.run` is one stretto session. For a conversation of several runs, name it
with `session_key`: an attribute (or key) of your run context, e.g.

    agent = instrument(agent, flow=..., reads=[...], session_key="thread_id")
    await Runner.run(agent, text, context=AppContext(thread_id="t-42"), session=SQLiteSession("t-42"))

or a function of the `RunContextWrapper` returning the id. Runs with the same id continue one
session (and one session file).
"""

from stretto_openai_agents.hooks import StrettoAgentHooks
from stretto_openai_agents.instrument import instrument, runtime_of, sessions_folder
from stretto_openai_agents.mcp import StrettoMCPServer
from stretto_openai_agents.options import StrettoOptions
from stretto_openai_agents.runtime import HARNESS, AgentRuntime

__all__ = ["HARNESS", "AgentRuntime", "StrettoAgentHooks", "StrettoMCPServer", "StrettoOptions", "instrument",
           "runtime_of", "sessions_folder"]
