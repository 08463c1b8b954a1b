"""Serving a flow: the runtime, binding at serve time, the speculator, the engine, live sessions."""
