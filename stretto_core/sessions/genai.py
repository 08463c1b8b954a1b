"""The OpenTelemetry GenAI conventions' attribute names stretto reads (`sessions/ingest/otel.py`)
and writes (`serve/telemetry.py`), pinned in one place that imports nothing: serving's spans
name their attributes without loading the ingest package."""

from __future__ import annotations

OPERATION = "gen_ai.operation.name"
EXECUTE_TOOL = "execute_tool"
CONVERSATION = "gen_ai.conversation.id"
TOOL_NAME = "gen_ai.tool.name"
CALL_ID = "gen_ai.tool.call.id"
ARGUMENTS = "gen_ai.tool.call.arguments"
RESULT = "gen_ai.tool.call.result"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CACHE_READ = "gen_ai.usage.cache_read.input_tokens"
CACHE_CREATION = "gen_ai.usage.cache_creation.input_tokens"
MODELS = ("gen_ai.response.model", "gen_ai.request.model")
AGENT_NAME = "gen_ai.agent.name"
ERROR_TYPE = "error.type"
