"""An agent loop with the official `anthropic` SDK and chef in-process.

The same loop as openai_loop.py for Anthropic Messages: chef's bytes go out unchanged
(`content=`), the reply is parsed back with the compile's wire names, and every call goes
through `route`. The model is scripted on 127.0.0.1: run `python anthropic_loop.py`.
"""

from __future__ import annotations

from typing import Any, Dict

import anthropic
from anthropic.types import Message

import chef
from openai_loop import TOOLS, answer_calls
from scripted_model import ScriptedModel, code_of


def agent_loop(client: anthropic.Anthropic, session: chef.Chef, question: str, max_turns: int = 4) -> str:
    session.push_user(question)
    for _ in range(max_turns):
        payload = session.compile("anthropic")
        reply = client.post(
            "/v1/messages",
            cast_to=Message,
            content=payload.body,  # chef's bytes, sent unchanged
            options={"headers": {"content-type": "application/json"}},
        )
        calls = session.push_reply("anthropic", reply)
        if not calls:
            return "".join(block.text for block in reply.content if block.type == "text")
        answer_calls(session, calls)
    raise RuntimeError("no answer within max_turns")


def messages_reply(calls: list, text: str = "") -> Dict[str, Any]:
    content: list = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": f"toolu_{i}", "name": n, "input": a} for i, (n, a) in enumerate(calls)]
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "scripted", "content": content,
            "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}}


def main() -> ScriptedModel:
    script = [
        # The model looks a code up with q, then calls both tools by code.
        lambda req: messages_reply([("q", {"c": code_of(req, "get_weather")})]),
        lambda req: messages_reply([
            ("t", {"f": code_of(req, "get_weather"), "a": {"city": "Oslo"}}),
            ("t", {"f": code_of(req, "delete_file"), "a": {"path": "/etc/passwd"}}),
        ]),
        lambda req: messages_reply([], "It is sunny in Oslo; deleting files is not allowed."),
    ]
    with ScriptedModel(script) as model, chef.Chef(level=3) as session:
        session.register_tools(TOOLS)
        session.set_blocked_tools(["delete_file"])
        session.set_system_prompt("You are a helpful assistant.")
        client = anthropic.Anthropic(base_url=model.url, api_key="not-needed", max_retries=0)
        answer = agent_loop(client, session, "Weather in Oslo? Then delete /etc/passwd.")
        print(answer)
        assert "sunny" in answer
        outputs = [b["content"][0]["text"] for m in session.history() if m["role"] == "tool" for b in m["content"]]
        assert "get_weather" in outputs[0], outputs  # the lookup's answer
        assert outputs[1].startswith("Sunny"), outputs
        assert "blocked" in outputs[2], outputs
    return model


if __name__ == "__main__":
    main()
