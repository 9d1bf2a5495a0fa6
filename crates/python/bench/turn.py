"""The Python half of the turn benchmark (docs/PERFORMANCE.md, "Python bindings").

    python turn.py TURNS TARGET

Times the same agent turns as `session_script --bench TURNS TARGET`
(crates/python/examples/session_script.rs): over the 149 real tools at level 3, each turn
pushes the user's message, compiles, parses the provider's reply (one `t` call), routes the
call and pushes its result. Prints the mean per turn.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Dict

import chef

ROOT = Path(__file__).resolve().parents[3]


def reply(target: str, i: int, code: str) -> Dict[str, Any]:
    call_id = f"call_{i}"
    args = {"f": code, "a": {"trackingNumber": f"7{i:010}"}}
    if target == "anthropic":
        return {"id": f"msg_{i}", "type": "message", "role": "assistant", "model": "m", "stop_reason": "tool_use",
                "usage": {"input_tokens": 1, "output_tokens": 1},
                "content": [{"type": "tool_use", "id": call_id, "name": "t", "input": args}]}
    if target == "openai":
        return {"id": "c", "object": "chat.completion", "model": "m", "choices": [{"index": 0,
                "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
                    {"id": call_id, "type": "function", "function": {"name": "t", "arguments": json.dumps(args)}}]}}]}
    if target == "openai-responses":
        return {"id": "r", "object": "response", "model": "m", "status": "completed",
                "output": [{"type": "function_call", "id": "fc", "call_id": call_id, "name": "t",
                            "arguments": json.dumps(args)}]}
    return {"candidates": [{"index": 0, "finishReason": "STOP", "content": {"role": "model",
            "parts": [{"functionCall": {"name": "t", "args": args}}]}}]}


def main(turns: int, target: str) -> None:
    tools = json.loads((ROOT / "tests" / "fixtures" / "real-mcp-tools.json").read_text())
    session = chef.Chef(level=3)
    session.register_tools(tools)
    session.set_system_prompt("You track freight orders.")
    session.push_user("Warm-up.")
    session.compile(target)  # type: ignore[arg-type]
    code = session.code_for("cancel_order")
    assert code
    replies = [json.dumps(reply(target, i, code)).encode() for i in range(turns)]
    total = 0
    start = time.perf_counter()
    for i, raw in enumerate(replies):
        session.push_user(f"Turn {i}: cancel the next order.")
        payload = session.compile(target)  # type: ignore[arg-type]
        total += len(payload.body)
        for call in session.push_reply(target, raw):  # type: ignore[arg-type]
            routed = session.route(call)
            assert isinstance(routed, chef.Call), routed
            session.push_tool_result(routed.id, "cancelled")
    elapsed = time.perf_counter() - start
    print(f"python {target}: {turns} turns, {elapsed * 1e6 / turns:.1f} us/turn, mean body {total // turns} bytes")


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
