"""stretto for Google ADK: one plugin that makes a learned flow's reads and records sessions.

    from google.adk.apps import App
    from stretto_adk import StrettoPlugin

    app = App(name="shop", root_agent=agent,
              plugins=[StrettoPlugin(flow="shop.flow.json", reads=["get_order", "get_customer"])])

Installed by `pip install "stretto[adk]"`. See `StrettoPlugin` for what it does and its options.
"""

from __future__ import annotations

from stretto_adk.convert import RESULT_KEY
from stretto_adk.plugin import HARNESS, StrettoPlugin

__all__ = ["HARNESS", "RESULT_KEY", "StrettoPlugin"]
