"""Parallel calls of one turn are taken in the model's order, and the wait for it cannot hang."""

from __future__ import annotations

import asyncio
import threading
import time

from stretto_langgraph.ordering import CallOrder


def test_a_result_that_comes_back_first_waits_for_the_call_before_it() -> None:
    order, happened = CallOrder(), []
    order.turn(["a", "b"])
    order.start("a")
    order.start("b")

    def second() -> None:
        order.wait("b")
        happened.append("b taken")

    thread = threading.Thread(target=second)
    thread.start()
    time.sleep(0.05)
    happened.append("a finished")
    order.finish("a")
    thread.join(5)
    assert happened == ["a finished", "b taken"]


def test_the_first_call_of_a_turn_never_waits() -> None:
    order = CallOrder(wait_cap=60, start_grace=60)
    order.turn(["a", "b"])
    order.start("b")
    order.start("a")
    order.wait("a")  # returns at once, or the test would hang for a minute


def test_a_call_the_state_already_answered_is_not_waited_for() -> None:
    order = CallOrder(wait_cap=60, start_grace=60)
    order.turn(["a", "b"])
    order.start("b", answered=["a"])
    order.wait("b")


def test_an_earlier_call_that_never_starts_is_waited_for_only_the_grace() -> None:
    order = CallOrder(wait_cap=60, start_grace=0.05)
    order.turn(["a", "b"])
    order.start("b")
    order.wait("b")  # "a" never comes: after the grace, "b" goes on


def test_a_new_model_turn_releases_whoever_still_waits() -> None:
    order, done = CallOrder(wait_cap=60, start_grace=60), threading.Event()
    order.turn(["a", "b"])
    order.start("a")
    order.start("b")
    thread = threading.Thread(target=lambda: (order.wait("b"), done.set()))
    thread.start()
    order.turn(["c", "d"])
    thread.join(5)
    assert done.is_set()


def test_the_async_wait_takes_the_same_order() -> None:
    async def run() -> list[str]:
        order, happened = CallOrder(), []
        order.turn(["a", "b", "c"])
        for call in "abc":
            order.start(call)

        async def taken(call: str, delay: float) -> None:
            await asyncio.sleep(delay)
            await order.await_turn(call)
            happened.append(call)
            order.finish(call)

        await asyncio.gather(taken("a", 0.06), taken("b", 0.03), taken("c", 0.0))
        return happened

    assert asyncio.run(run()) == ["a", "b", "c"]
