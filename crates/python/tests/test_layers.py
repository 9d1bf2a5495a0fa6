"""Dynamic state, the output guardrail, the prefill and skills from Python: each reaches
the compiled bytes the way the Rust session puts it there, and bad input is a typed error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import chef


def test_dynamic_state_rides_the_last_user_message_then_clears() -> None:
    s = chef.Chef()
    s.push_user("Fix the test.")
    s.set_dynamic_state({"file": "lib.rs", "step": 2})
    state = s.dynamic_state()
    assert state is not None
    assert state["state"] == {"file": "lib.rs", "step": 2} and state["placement"] == "last_user"
    assert "<file>lib.rs</file>" in state["xml"]
    body = s.compile("openai").json()
    last = body["messages"][-1]
    assert last["role"] == "user" and "<dynamic_state>" in json.dumps(last)
    assert s.clear_dynamic_state() and not s.clear_dynamic_state()
    assert s.dynamic_state() is None
    assert "<dynamic_state>" not in s.compile("openai").body.decode()


def test_dynamic_state_as_a_system_message_and_a_bad_placement() -> None:
    s = chef.Chef()
    s.push_user("Go on.")
    s.set_dynamic_state({"step": 3}, placement="system")
    assert "CURRENT TASK STATE" in s.compile("openai").body.decode()
    with pytest.raises(chef.InvalidInputError, match="placement"):
        s.set_dynamic_state({"step": 4}, placement="middle")
    assert s.dynamic_state()["state"] == {"step": 3}  # the old state stays


def test_guardrail_and_prefill_reach_the_request_and_check_the_answer() -> None:
    s = chef.Chef()
    s.set_guardrail(tag="answer")
    s.set_prefill("<answer>")
    assert s.prefill == "<answer>"
    s.push_user("2 + 2?")
    body = s.compile("anthropic").body.decode()
    assert "inside <answer> and </answer>" in body
    assert '{"role":"assistant","content":[{"type":"text","text":"<answer>"}]}' in body
    assert s.check_reply("<answer>4</answer>") == {"ok": True, "content": "4"}
    verdict = s.check_reply("four")
    assert verdict is not None and verdict["ok"] is False
    assert verdict["problem"] == "missing_tag" and "<answer>" in verdict["retry"]
    s.set_guardrail()
    s.set_prefill(None)
    assert s.check_reply("anything") is None and s.prefill is None


def test_a_json_guardrail_validates_against_its_schema() -> None:
    s = chef.Chef()
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    s.set_guardrail(schema=schema)
    assert s.check_reply('{"city": "Oslo"}')["ok"] is True
    verdict = s.check_reply('{"town": "Oslo"}')
    assert verdict["ok"] is False and verdict["problem"] == "schema" and verdict["detail"]
    assert s.check_reply("not json")["problem"] == "not_json"
    with pytest.raises(chef.InvalidInputError, match="tag name"):
        s.set_guardrail(tag="1bad")
    with pytest.raises(chef.InvalidInputError, match="object"):
        s.set_guardrail(schema={"type": "string"})
    with pytest.raises(chef.InvalidInputError, match="not both"):
        s.set_guardrail(tag="answer", schema=schema)
    assert s.check_reply('{"city": "Oslo"}')["ok"] is True  # the old guardrail stays


def _skill(root: Path, name: str, body: str, description: str = "A skill.") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    path = folder / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}\n")
    return path


def test_skills_load_list_activate_and_report_bad_files(tmp_path: Path) -> None:
    project, user = tmp_path / "project", tmp_path / "user"
    _skill(project, "release-notes", "Write notes for version $0.", "Write release notes.")
    _skill(user, "release-notes", "The user's version.")
    _skill(user, "haiku", "Answer in 5-7-5.", "Answer in a haiku.")
    (user / "broken").mkdir()
    (user / "broken" / "SKILL.md").write_text("---\nname: [unclosed\n---\n")
    s = chef.Chef()
    report = s.load_skills([project, user])
    assert report["loaded"] == ["release-notes", "haiku"]
    assert [p["path"].endswith("SKILL.md") for p in report["problems"]] == [True]
    assert report["shadowed"][0]["name"] == "release-notes"
    assert report["shadowed"][0]["kept"].startswith(str(project))
    assert s.skill_names() == ["haiku", "release-notes"]  # the registry, by name
    assert "release-notes" in s.skill_listing() and "haiku" in s.skill_listing()

    s.push_user("Ship it.")
    s.activate_skill("release-notes", ["2.4"])
    assert s.active_skill == "release-notes"
    assert "Write notes for version 2.4." in s.compile("openai").body.decode()
    assert s.deactivate_skill() == "release-notes" and s.active_skill is None
    assert "Write notes for version" not in s.compile("openai").body.decode()
    with pytest.raises(chef.ChefError) as raised:
        s.activate_skill("missing")
    assert "haiku" in str(raised.value)


def test_the_active_skill_survives_a_restore_into_a_session_without_skills(tmp_path: Path) -> None:
    s = chef.Chef()
    s.load_skills([_skill(tmp_path / "skills", "haiku", "Answer in 5-7-5 about $0.")])
    s.push_user("Describe Rust.")
    s.activate_skill("haiku", ["Rust"])
    s.save(tmp_path / "snap.json")
    r = chef.Chef.from_snapshot(tmp_path / "snap.json")
    assert r.active_skill == "haiku" and r.skill_names() == []
    before = r.compile("openai").body
    r.activate_skill("haiku")  # the active one, as it is
    assert r.active_skill == "haiku" and r.compile("openai").body == before
    with pytest.raises(chef.InvalidInputError, match="load_skills"):
        r.activate_skill("haiku", ["Go"])
    with pytest.raises(chef.UnknownSkillError):
        r.activate_skill("limerick")


def test_a_single_skill_file_loads_and_replaces_the_registered_ones(tmp_path: Path) -> None:
    s = chef.Chef()
    s.load_skills([_skill(tmp_path, "haiku", "Answer in 5-7-5.")])
    assert s.skill_names() == ["haiku"]
    report = s.load_skills([tmp_path / "nowhere" / "SKILL.md"])
    assert report["loaded"] == [] and len(report["problems"]) == 1
    assert s.skill_names() == []


def test_a_large_tool_result_is_offloaded_flushed_and_read_back() -> None:
    s = chef.Chef(tools_mode="unified")
    s.set_offload_policy(chars=2_000)
    policy = s.offload_policy()
    assert policy is not None and policy["threshold"] == {"chars": 2000}
    s.push_user("Read the log.")
    s.push({"role": "assistant", "content": [
        {"type": "tool_call", "id": "c1", "name": "read_log", "arguments": {}}]})
    log = "".join(f"{i} GET /health 200\n" for i in range(5_000))
    s.push_tool_result("c1", log)
    kept = json.dumps(s.history()[-1])
    assert "Tool result offloaded" in kept and "context://vfs/" in kept
    assert len(kept) < 4_000
    assert s.pending_offloads() == 1
    report = s.flush_offloads()
    assert len(report["stored"]) == 1 and report["kept_whole"] == []
    assert s.pending_offloads() == 0
    uri = report["stored"][0]
    s.compile("openai")
    owned = s.route({"id": "v1", "name": "context",
                     "arguments": {"command": "view", "path": uri, "offset": 4_001, "limit": 2}})
    assert isinstance(owned, chef.Owned)
    reply = s.handle_tool(owned)
    assert not reply.is_error, reply.text
    assert "4000 GET /health 200" in reply.text

    s.set_offload_policy()
    assert s.offload_policy() is None
    with pytest.raises(chef.InvalidInputError, match="not both"):
        s.set_offload_policy(chars=10, tokens=10)


def test_the_load_skill_tool_is_offered_on_request_and_refused_otherwise(tmp_path: Path) -> None:
    skills = _skill(tmp_path / "skills", "haiku", "Answer in 5-7-5.", "Answer in a haiku.")
    call = {"id": "k1", "name": "load_skill", "arguments": {"name": "haiku"}}
    off = chef.Chef()
    off.load_skills([skills])
    off.push_user("a poem")
    assert "load_skill" not in off.compile("openai").wire_tools
    reply = off.handle_tool(off.route(call))
    assert reply.is_error and "not available" in reply.text and off.active_skill is None
    on = chef.Chef(skill_tool=True)
    on.load_skills([skills])
    on.push_user("a poem")
    assert "load_skill" in on.compile("openai").wire_tools
    assert "call load_skill" in on.skill_listing()
    reply = on.handle_tool(on.route(call))
    assert not reply.is_error and on.active_skill == "haiku"


def test_a_memory_entry_with_a_ttl_is_shown_in_that_many_compiles() -> None:
    s = chef.Chef(memory=True)
    s.memory_set("note", "remember me", ttl=2)
    s.memory_set("kept", "always")
    s.push_user("hi")
    shown = []
    for _ in range(3):
        shown.append(b"remember me" in s.compile("openai").body)
    assert shown == [True, True, False]
    assert s.memory_get("note") is None and s.memory_get("kept") == "always"
