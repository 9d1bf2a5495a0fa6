"""Typed use of the chef package, checked by mypy --strict against the stubs
(test_types.py). It is only type-checked, never run."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import chef


def turn(session: chef.Chef, reply: bytes) -> List[Tuple[str, bool]]:
    payload: chef.Payload = session.compile("anthropic")
    body: bytes = payload.body
    assert body
    names: dict[str, str] = payload.names
    assert isinstance(names, dict)
    out: List[Tuple[str, bool]] = []
    for call in session.push_reply("anthropic", reply):
        routed: chef.Routed = session.route(call)
        if isinstance(routed, chef.Call):
            out.append((routed.name, False))
        elif isinstance(routed, chef.Owned):
            answer: chef.OwnedReply = session.handle_tool(routed)
            out.append((answer.text, answer.is_error))
        else:
            text: str = routed.reply
            out.append((text, routed.is_error))
    return out


def setup() -> chef.Chef:
    with chef.Chef(level=3, tools_mode="unified", memory=True) as session:
        names: List[str] = session.register_tools([{"name": "a", "inputSchema": {"type": "object"}}])
        assert names
        unmatched: List[str] = session.set_blocked_tools(["b"])
        assert unmatched
        session.set_prune_policy({"policy": "ranked", "top_k": 8, "always_keep": []})
        session.set_prune_policy("by_task")
        session.push({"role": "user", "content": "hi"})
        hits: List[Tuple[str, float]] = session.search("a", k=3)
        assert hits is not None
        code: Optional[str] = session.code_for("a")
        assert code is None or code
        session.set_dynamic_state({"step": 1}, placement="system")
        state: Optional[Dict[str, Any]] = session.dynamic_state()
        assert state is None or state["xml"]
        session.set_guardrail(tag="answer")
        session.set_prefill("<answer>")
        verdict: Optional[Dict[str, Any]] = session.check_reply("<answer>4</answer>")
        assert verdict is None or verdict["ok"] in (True, False)
        prefill: Optional[str] = session.prefill
        assert prefill is None or prefill
        report: Dict[str, Any] = session.load_skills(["skills"])
        assert report is not None
        listing: str = session.skill_listing()
        assert listing is not None
        session.set_offload_policy(chars=8_000, head=1_500, tail=500)
        offload: Optional[Dict[str, Any]] = session.offload_policy()
        assert offload is None or offload["threshold"]
        pending: int = session.pending_offloads()
        assert pending >= 0
        session.set_summarizer(lambda request: str(request["instruction"])[:10])
        session.report_token_usage(1_000)
        budget: Dict[str, Any] = session.budget()
        assert budget["current"] >= 0
        session.request_new_context()
        step: Dict[str, Any] = session.overflow()
        assert step["outcome"]
        session.set_summarizer(None)
        active: Optional[str] = session.active_skill
        assert active is None or active
        session.save("/tmp/never-written.chef", label=None)
        return session.fork()


def errors() -> str:
    try:
        chef.Chef().load("missing.chef")
    except chef.SnapshotError as e:
        kind: str = e.kind
        return kind + e.variant + str(e.fields.get("path"))
    return ""
