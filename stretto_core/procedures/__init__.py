"""Compiled procedures: where no user speaks, compile the whole policy from traces and run it.

In a solo regime (τ²-bench telecom's no-user mode) every branch follows a tool result, so the
next call, writes included, is a function of the tool state. `compile` learns that function from
successful episodes: one decision tree per site (the tool that just returned, or the start) over
features of the tool state and the ticket, whose leaves are whole calls with arguments bound by
provenance. `runtime` executes the procedure against any tool set with no model and returns a
verdict (resolved, transferred, or hand back); `cascade` gives a handed-back ticket to a model
with the procedure's calls as its context. The procedure itself is one JSON file (`ir`).
"""
