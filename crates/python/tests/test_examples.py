"""The example agent loops (examples/openai_loop.py, examples/anthropic_loop.py) run with
the official SDKs against the scripted local model, and what the SDK put on the wire is
exactly the bytes chef compiled."""

from __future__ import annotations

from typing import Any, List

import pytest

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

import anthropic_loop  # noqa: E402
import chef  # noqa: E402
import openai_loop  # noqa: E402
from scripted_model import ScriptedModel  # noqa: E402


class Recording:
    """A session that keeps each compiled body (duck-typed for the loops)."""

    def __init__(self, session: chef.Chef) -> None:
        self.session = session
        self.bodies: List[bytes] = []

    def compile(self, target: Any) -> chef.Payload:
        payload = self.session.compile(target)
        self.bodies.append(payload.body)
        return payload

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)


def test_the_examples_run() -> None:
    assert openai_loop.main().bodies
    assert anthropic_loop.main().bodies


def test_the_sdks_send_chefs_bytes_unchanged() -> None:
    for module, make_client, target, path in (
        (openai_loop, lambda url: openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0), "openai",
         "/v1/chat/completions"),
        (anthropic_loop, lambda url: anthropic.Anthropic(base_url=url, api_key="x", max_retries=0), "anthropic",
         "/v1/messages"),
    ):
        reply = (openai_loop.chat_reply([], "done") if target == "openai"
                 else anthropic_loop.messages_reply([], "done"))
        with ScriptedModel([lambda req: reply]) as model:
            session = chef.Chef(level=3)
            session.register_tools(openai_loop.TOOLS)
            recording = Recording(session)
            answer = module.agent_loop(make_client(model.url), recording, "hello")  # type: ignore[arg-type]
            assert answer == "done"
            assert model.bodies == recording.bodies and model.paths == [path]
