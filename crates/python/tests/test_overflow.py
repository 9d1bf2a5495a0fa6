"""Overflow from Python: a context window, a Python callable as the summariser, the budget
and each step's outcome; a failing or re-entrant summariser leaves the history whole, and
another thread waiting for the session while it runs does not deadlock."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

import chef


def _long_session(**kwargs: Any) -> chef.Chef:
    s = chef.Chef(context_window=400, **kwargs)
    for n in range(4):
        s.push_user(f"Step {n}: " + "please look at the build log again " * 6)
        s.push({"role": "assistant", "content": f"Looked at step {n}: " + "nothing new " * 10})
    s.push_user("What now?")
    return s


def test_budget_without_a_window_is_unlimited() -> None:
    s = chef.Chef()
    s.push_user("Hello there")
    budget = s.budget()
    assert budget["limit"] is None and budget["trigger"] is None and budget["remaining"] is None
    assert budget["current"] > 0 and budget["over"] is False
    assert s.overflow() == {"outcome": "not_needed", "budget": s.budget()}


def test_a_python_summariser_replaces_the_older_turns() -> None:
    seen: list[dict[str, Any]] = []

    def summarize(request: dict[str, Any]) -> str:
        seen.append(request)
        return "<analysis>scratch</analysis><summary>Goal: fix the build. Done: steps 0-3.</summary>"

    s = _long_session()
    s.set_summarizer(summarize)
    before = len(s.history())
    assert s.budget()["over"] is True
    outcome = s.overflow()
    assert outcome["outcome"] == "summarized"
    assert outcome["window"] == 1 and outcome["replaced"] > 0 and outcome["pinned_kept"] == 0
    assert outcome["archive"].startswith("context://archive/window-0")
    (request,) = seen
    assert set(request) == {"span", "instruction", "window", "messages"}
    assert request["window"] == 0 and "<summary>" in request["instruction"]
    assert request["messages"][:-1] == request["span"]
    assert request["messages"][-1]["role"] == "user"
    history = s.history()
    assert len(history) < before
    body = s.compile("openai").body.decode()
    assert "Goal: fix the build" in body and "scratch" not in body
    assert "What now?" in body
    assert s.budget()["over"] is False


def test_without_a_summariser_the_older_turns_are_archived_and_dropped() -> None:
    s = _long_session()
    outcome = s.overflow()
    assert outcome["outcome"] == "dropped" and outcome["dropped"] > 0
    assert outcome["archive"].startswith("context://archive/")


def test_a_failing_summariser_keeps_the_history_and_opens_the_breaker() -> None:
    def summarize(request: dict[str, Any]) -> str:
        raise ValueError("the model is down")

    s = _long_session()
    s.set_summarizer(summarize)
    before = s.history()
    for failures in (1, 2, 3):
        outcome = s.overflow()
        assert outcome["outcome"] == "failed" and outcome["failures"] == failures
        assert "the model is down" in outcome["reason"]
    assert s.history() == before
    assert s.overflow() == {"outcome": "breaker_open", "failures": 3}


def test_ctrl_c_in_the_summariser_is_raised_again_and_the_history_kept() -> None:
    def summarize(request: dict[str, Any]) -> str:
        raise KeyboardInterrupt

    s = _long_session()
    s.set_summarizer(summarize)
    before = s.history()
    with pytest.raises(KeyboardInterrupt):
        s.overflow()
    assert s.history() == before
    s.set_summarizer(lambda request: "They looked at the build log four times.")
    assert s.overflow()["outcome"] == "summarized"


def test_a_summariser_that_returns_no_text_fails() -> None:
    s = _long_session()
    s.set_summarizer(lambda request: 42)
    assert s.overflow()["outcome"] == "failed"
    with pytest.raises(chef.InvalidInputError, match="callable"):
        s.set_summarizer("not callable")
    s.set_summarizer(None)
    assert s.overflow()["outcome"] == "dropped"


def test_the_summariser_cannot_call_its_own_session() -> None:
    errors: list[BaseException] = []

    def summarize(request: dict[str, Any]) -> str:
        try:
            s.history()
        except chef.InvalidInputError as e:
            errors.append(e)
            raise
        return "never"

    s = _long_session()
    s.set_summarizer(summarize)
    outcome = s.overflow()
    assert outcome["outcome"] == "failed" and "cannot call" in outcome["reason"]
    assert len(errors) == 1
    # The session works again once the step is over.
    assert s.budget()["over"] is True
    other = chef.Chef()  # another session is fine inside a summariser
    s.set_summarizer(lambda request: other.push_user("x") or "Summary.")
    assert s.overflow()["outcome"] == "summarized"


def test_another_thread_waits_for_the_session_without_a_deadlock() -> None:
    got: list[int] = []

    def other_thread() -> None:
        got.append(s.turn)

    def summarize(request: dict[str, Any]) -> str:
        t = threading.Thread(target=other_thread)
        t.start()
        time.sleep(0.2)  # the other thread takes the GIL and waits for the session
        threads.append(t)
        return "Summary of the work."

    threads: list[threading.Thread] = []
    s = _long_session()
    s.set_summarizer(summarize)
    assert s.overflow()["outcome"] == "summarized"
    threads[0].join(timeout=10)
    assert not threads[0].is_alive() and got == [s.turn]


def test_reported_usage_and_a_requested_new_context() -> None:
    s = chef.Chef(context_window=10_000, trigger_ratio=0.5)
    s.push_user("First question")
    s.push({"role": "assistant", "content": "First answer"})
    s.push_user("Second question")
    assert s.budget()["trigger"] == 5_000.0 and s.budget()["over"] is False
    s.report_token_usage(6_000)
    assert s.budget()["over"] is True and s.budget()["current"] == 6_000
    s.set_summarizer(lambda request: "They asked a first question.")
    assert s.overflow()["outcome"] == "summarized"
    assert s.overflow()["outcome"] == "not_needed"  # the reported usage was consumed
    s.push({"role": "assistant", "content": "Second answer"})
    s.push_user("Third question")
    s.request_new_context()
    assert s.overflow()["outcome"] == "summarized"
