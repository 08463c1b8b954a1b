"""stretto for LangChain agents and LangGraph graphs (installed by `pip install "stretto[langgraph]"`).

    from langchain.agents import create_agent
    from stretto_langgraph import StrettoMiddleware

    agent = create_agent(model, tools, middleware=[StrettoMiddleware(flow="retail.flow.json",
                                                                     reads=["get_order", "get_user"])])

For a hand-built graph, wrap its tool node instead:

    wrapper = StrettoToolWrapper(flow="retail.flow.json", reads=["get_order", "get_user"])
    graph.add_node("tools", wrapper.tool_node(tools))   # ToolNode(tools, wrap_tool_call=wrapper,
                                                        #          awrap_tool_call=wrapper.awrap)

Which tools are reads: `reads=[...]`, `manifest=` a manifest file, or the tools' own metadata
(`tool.metadata = {"readOnlyHint": True}`, as langchain-mcp-adapters sets it from MCP
annotations). A tool no authority marks read is never looked up.
"""

from __future__ import annotations

from stretto_langgraph.kinds import manifest_of_tools, tool_kind
from stretto_langgraph.middleware import StrettoMiddleware, StrettoState
from stretto_langgraph.tool_node import StrettoToolWrapper

__all__ = ["StrettoMiddleware", "StrettoState", "StrettoToolWrapper", "manifest_of_tools", "tool_kind"]
