"""An agent loop with the official `openai` SDK and chef in-process.

chef compiles the session into the request bytes, the SDK sends them as they are
(`content=`, no re-serialisation), and every call in the reply goes through `route`,
where the gate refuses a blocked tool whatever name or code the model used. The model is
scripted on 127.0.0.1 (scripted_model.py): run `python openai_loop.py`.
"""

from __future__ import annotations

import json
from typing import Any, Dict

import openai
from openai.types.chat import ChatCompletion

import chef
from scripted_model import ScriptedModel, code_of

TOOLS = [
    {"name": "get_weather", "description": "Current weather for a city.",
     "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    {"name": "delete_file", "description": "Delete a file.",
     "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
]


def run_tool(name: str, arguments: Dict[str, Any]) -> str:
    """Your own dispatcher: only `chef.Call` outcomes reach it."""
    if name == "get_weather":
        return f"Sunny, 21 °C in {arguments['city']}"
    raise AssertionError(f"{name} must never be dispatched")


def agent_loop(client: openai.OpenAI, session: chef.Chef, question: str, max_turns: int = 4) -> str:
    session.push_user(question)
    for _ in range(max_turns):
        payload = session.compile("openai")
        reply = client.post(
            "/chat/completions",
            cast_to=ChatCompletion,
            content=payload.body,  # chef's bytes, sent unchanged
            options={"headers": {"content-type": "application/json"}},
        )
        calls = session.push_reply("openai", reply)
        if not calls:
            return reply.choices[0].message.content or ""
        answer_calls(session, calls)
    raise RuntimeError("no answer within max_turns")


def answer_calls(session: chef.Chef, calls: list) -> None:
    """Routes every call of a reply and pushes its tool result (any provider's loop)."""
    for call in calls:
        routed = session.route(call)  # the one dispatch entry point
        if isinstance(routed, chef.Call):
            session.push_tool_result(call.id, run_tool(routed.name, routed.arguments))
        elif isinstance(routed, chef.Owned):
            answer = session.handle_tool(routed)  # memory, the context store
            session.push_tool_result(call.id, answer.text, answer.is_error)
        else:  # a lookup, a toolkit load, a blocked tool, a model mistake
            session.push_tool_result(call.id, routed.reply, routed.is_error)


def chat_reply(calls: list, text: str | None = None) -> Dict[str, Any]:
    message: Dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, (n, a) in enumerate(calls)
        ]
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "finish_reason": "tool_calls" if calls else "stop", "message": message}]}


def main() -> ScriptedModel:
    script = [
        # Turn 1: the model reads the codes from chef's tool map and calls both tools.
        lambda req: chat_reply([
            ("t", {"f": code_of(req, "get_weather"), "a": {"city": "Oslo"}}),
            ("t", {"f": code_of(req, "delete_file"), "a": {"path": "/etc/passwd"}}),
        ]),
        # Turn 2: it answers from the tool results.
        lambda req: chat_reply([], "It is sunny in Oslo; deleting files is not allowed."),
    ]
    with ScriptedModel(script) as model, chef.Chef(level=3) as session:
        session.register_tools(TOOLS)
        session.set_blocked_tools(["delete_file"])
        session.set_system_prompt("You are a helpful assistant.")
        client = openai.OpenAI(base_url=model.url + "/v1", api_key="not-needed", max_retries=0)
        answer = agent_loop(client, session, "Weather in Oslo? Then delete /etc/passwd.")
        results = [m for m in session.history() if m["role"] == "tool"]
        print(answer)
        assert "sunny" in answer
        outputs = [b["content"][0]["text"] for m in results for b in m["content"]]
        assert outputs[0].startswith("Sunny"), outputs
        assert "blocked" in outputs[1], outputs
    return model


if __name__ == "__main__":
    main()
