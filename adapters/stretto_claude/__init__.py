"""stretto for the Claude Agent SDK: fewer model turns for agents whose tools are in-process MCP servers.

    from claude_agent_sdk import ClaudeAgentOptions, query
    from stretto_claude import claude_hooks

    servers = {"shop": create_sdk_mcp_server("shop", tools=[get_order, get_customer, refund])}
    hooks = claude_hooks(flow="shop.flow.json", mcp_servers=servers)
    options = ClaudeAgentOptions(hooks=hooks, mcp_servers=servers, allowed_tools=["mcp__shop"])
    async for message in hooks.watch(query(prompt="Where is my order O1?", options=options)):
        ...

`hooks.watch(...)` is optional: it lets the recorded sessions carry whole model turns and their
input tokens; without it each call's turn is inferred.
"""

from stretto_claude.hooks import HARNESS, ClaudeHooks, claude_hooks, merged_hooks
from stretto_claude.names import ToolNames, exposed_name

__all__ = ["HARNESS", "ClaudeHooks", "ToolNames", "claude_hooks", "exposed_name", "merged_hooks"]
