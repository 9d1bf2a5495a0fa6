"""Bad input from Python raises a typed exception carrying the Rust error's information,
and never crashes the interpreter."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import chef

TOOL = {"name": "get_weather", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}


def test_the_hierarchy() -> None:
    assert issubclass(chef.SnapshotError, chef.ChefError)
    assert issubclass(chef.InvalidInputError, ValueError)
    assert issubclass(chef.ToolLoadError, chef.ChefError) and issubclass(chef.ToolLoadError, ValueError)
    assert issubclass(chef.ClosedError, RuntimeError)


@pytest.mark.parametrize("bad", [3, None, 1.5, object(), [[]], ["not a tool"]])
def test_wrong_types_for_tools(bad: Any) -> None:
    with pytest.raises((chef.ChefError, TypeError)):
        chef.Chef().register_tools(bad)


def test_malformed_tool_json_names_the_place() -> None:
    with pytest.raises(chef.ToolLoadError) as e:
        chef.Chef().register_tools('[{"name": "a", "inputSchema": ')
    assert e.value.variant == "Json" and e.value.fields["line"] == 1 and e.value.kind == "tool_load"
    with pytest.raises(chef.ToolLoadError) as e:
        chef.Chef().register_tools([TOOL, {"name": 3}])
    assert e.value.fields["index"] == 1 and e.value.fields["field"] == "name"
    with pytest.raises(chef.ToolLoadError) as e:
        chef.Chef().register_tools([TOOL, TOOL])
    assert e.value.variant == "DuplicateName" and e.value.fields["name"] == "get_weather"
    with pytest.raises(chef.ToolLoadError):
        chef.Chef().register_tools(b"\xff\xfe")


def test_values_that_are_not_json() -> None:
    s = chef.Chef()
    with pytest.raises(chef.InvalidInputError):
        s.register_tools([{"name": "a", "inputSchema": {"type": "object", "x": math.nan}}])
    with pytest.raises(chef.InvalidInputError):
        s.register_tools([{"name": "a", "inputSchema": {1: "integer key"}}])
    with pytest.raises(chef.InvalidInputError):
        s.register_tools([{"name": "a", "inputSchema": {"type": "object", "big": 2**70}}])
    with pytest.raises(chef.InvalidInputError):
        s.register_tools([{"name": "a", "inputSchema": {"type": "object", "s": {1, 2}}}])
    deep: Any = []
    for _ in range(10_000):
        deep = [deep]
    with pytest.raises(chef.InvalidInputError):
        s.register_tools(deep)
    cyclic: Any = {}
    cyclic["self"] = cyclic
    with pytest.raises(chef.InvalidInputError):
        s.push(cyclic)


def test_bad_messages_calls_targets_and_policies() -> None:
    s = chef.Chef()
    with pytest.raises(chef.InvalidInputError):
        s.push({"role": "wizard", "content": "hi"})
    with pytest.raises(chef.InvalidInputError):
        s.push('{"role": "user", "content": ')
    with pytest.raises(TypeError):
        s.push_user(42)  # type: ignore[arg-type]
    with pytest.raises(chef.InvalidInputError) as e:
        s.compile("claude")  # type: ignore[arg-type]
    assert "openai-responses" in str(e.value)
    with pytest.raises(TypeError):
        s.route(["not", "a", "call"])  # type: ignore[arg-type]
    with pytest.raises(chef.InvalidInputError):
        s.route({"id": "x"})
    with pytest.raises(chef.InvalidInputError):
        s.set_prune_policy("sometimes")  # type: ignore[arg-type]
    with pytest.raises(chef.InvalidInputError):
        chef.Chef(level=9)
    for level in (-1, 256):
        with pytest.raises(chef.InvalidInputError, match="level"):
            chef.Chef(level=level)
    for ratio in (float("nan"), float("inf"), 0.0, 1.5, -0.2):
        with pytest.raises(chef.InvalidInputError, match="trigger_ratio"):
            chef.Chef(context_window=1000, trigger_ratio=ratio)
    for window in (0, -5):
        with pytest.raises(chef.InvalidInputError, match="context_window"):
            chef.Chef(context_window=window)
    assert chef.Chef(context_window=1000, trigger_ratio=1.0) is not None
    with pytest.raises(chef.InvalidInputError):
        chef.Chef(tools_mode="both")  # type: ignore[arg-type]
    with pytest.raises(chef.ResponseError) as r:
        s.push_reply("openai", b"{not json")
    assert r.value.fields["target"] == "openai"
    with pytest.raises(chef.ResponseError):
        s.push_reply("anthropic", {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})


def test_a_result_for_a_call_the_history_does_not_hold_is_refused() -> None:
    s = chef.Chef()
    s.register_tools([TOOL])
    s.push_user("hi")
    with pytest.raises(chef.InvalidInputError, match="nosuch"):
        s.push_tool_result("nosuch", "12 C")
    assert len(s.history()) == 1
    s.push({"role": "assistant", "content": [
        {"type": "tool_call", "id": "c1", "name": TOOL["name"], "arguments": {}}]})
    s.push_tool_result("c1", "12 C")
    assert len(s.history()) == 3
    # A second result for the same call: every provider would refuse the request.
    with pytest.raises(chef.InvalidInputError, match="already has its result"):
        s.push_tool_result("c1", "13 C")
    assert len(s.history()) == 3


def test_a_schema_read_with_changes_warns_once_per_tool_naming_each_change() -> None:
    import warnings

    s = chef.Chef()
    odd = {"name": "ship", "inputSchema": {"type": "object", "properties": {
        "weight": {"type": "float"}, "mode": {"type": "banana"}}}}
    with pytest.warns(chef.SchemaWarning) as caught:
        assert s.register_tools([odd, TOOL]) == ["ship", TOOL["name"]]
    assert len(caught) == 1
    text = str(caught[0].message)
    assert "tool ship" in text and "properties.weight: type `float` read as `number`" in text
    assert "`banana`" in text
    # A tool as written: no warning; and a warning is not an error (the tool is registered).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.register_tools([TOOL])
    assert issubclass(chef.SchemaWarning, UserWarning)


def test_an_empty_system_prompt_and_an_empty_reply_send_nothing_a_provider_refuses() -> None:
    s = chef.Chef()
    s.set_system_prompt("")
    s.push_user("hi")
    assert "system" not in s.compile("anthropic").json()
    # A reply that stopped at once, with no text and no call, is not appended: the next
    # request would carry an empty assistant turn.
    empty = {"id": "m", "type": "message", "role": "assistant", "content": [],
             "stop_reason": "end_turn", "model": "claude", "usage": {"input_tokens": 1, "output_tokens": 0}}
    assert s.push_reply("anthropic", empty) == []
    assert len(s.history()) == 1


def test_registry_errors_say_what_clashes() -> None:
    def tool(name: str) -> dict:
        return {"name": name, "inputSchema": {"type": "object"}}

    s = chef.Chef()
    with pytest.raises(chef.RegistryError) as e:
        s.register_namespaces([{"name": "forecast", "description": "Forecasts", "tools": [tool("daily")]},
                               {"name": "forecast", "description": "Again", "tools": [tool("hourly")]}])
    assert e.value.variant == "DuplicateGroup", e.value.variant
    assert e.value.fields == {"group_kind": "namespace", "name": "forecast"}, e.value.fields
    with pytest.raises(chef.RegistryError) as e:
        s.register_tools([tool("load_toolkit")])
    assert e.value.variant == "ReservedToolName"
    assert e.value.fields["name"] == "load_toolkit" and e.value.fields["owner"], e.value.fields


def test_snapshot_files_that_are_not_snapshots(tmp_path: Path) -> None:
    s = chef.Chef(memory=True)
    s.register_tools([TOOL])
    s.push_user("hi")
    with pytest.raises(chef.SnapshotError) as e:
        s.load(tmp_path / "missing.chef")
    assert e.value.variant == "Io" and e.value.fields["path"].endswith("missing.chef")
    # str() says the cause too (it said "snapshot i/o failed at …" alone); the message stays.
    assert str(e.value).startswith(e.value.message + ": "), str(e.value)
    assert "No such file" in str(e.value), str(e.value)
    empty = tmp_path / "empty.chef"
    empty.write_bytes(b"")
    with pytest.raises(chef.SnapshotError) as e:
        s.load(empty)
    assert e.value.variant == "Corrupt" and "the file is empty" in str(e.value), str(e.value)
    garbage = tmp_path / "garbage.chef"
    garbage.write_bytes(b"\x00\x01 not a snapshot")
    with pytest.raises(chef.SnapshotError) as e:
        s.load(garbage)
    assert e.value.kind == "snapshot" and e.value.variant in ("Corrupt", "NotASnapshot")
    other = tmp_path / "other.json"
    other.write_text('{"hello": "world"}')
    with pytest.raises(chef.SnapshotError):
        s.load(other)
    good = tmp_path / "good.chef"
    s.save(good, label="before")
    data = bytearray(good.read_bytes())
    data[len(data) // 2] ^= 0x20  # one flipped bit
    flipped = tmp_path / "flipped.chef"
    flipped.write_bytes(bytes(data))
    with pytest.raises(chef.SnapshotError):
        s.load(flipped)
    # What is not a regular file is refused before it is read: a device that never ends,
    # a FIFO no one writes to (opening it would wait for a writer), a directory.
    fifo = tmp_path / "pipe.chef"
    os.mkfifo(fifo)
    for path in (Path("/dev/zero"), fifo, tmp_path):
        with pytest.raises(chef.SnapshotError) as e:
            s.load(path)
        assert e.value.variant == "Io" and "regular file" in e.value.fields["reason"], e.value
    # The session is intact after every refusal.
    assert s.history()[0]["content"][0]["text"] == "hi"
    with pytest.raises(chef.SnapshotError):
        s.save(tmp_path / "no" / "such" / "dir" / "x.chef")


def test_memory_errors() -> None:
    with pytest.raises(chef.ChefMemoryError) as e:
        chef.Chef().memory_set("k", "v")
    assert e.value.variant == "NoMemory"
    with pytest.raises(chef.ChefMemoryError) as e:
        chef.Chef(memory=True).memory_set("../escape", "v")
    assert e.value.kind == "memory"
    assert e.value.fields["key"] == "../escape" and e.value.fields["reason"], e.value.fields
    # A key no entry can have is refused by the readers too, not taken for a missing one.
    s = chef.Chef(memory=True)
    for read in (s.memory_get, s.memory_delete):
        with pytest.raises(chef.ChefMemoryError) as e:
            read("../escape")
        assert e.value.fields["key"] == "../escape", e.value.fields
    assert s.memory_get("no-such-key") is None and s.memory_delete("no-such-key") is False


def test_handle_tool_wants_an_owned_call() -> None:
    s = chef.Chef()
    with pytest.raises(TypeError):
        s.handle_tool({"id": "x", "name": "create_memory"})  # type: ignore[arg-type]


def test_closed_sessions() -> None:
    s = chef.Chef()
    s.close()
    s.close()  # twice is fine
    assert s.closed and repr(s) == "Chef(closed)"
    for f in (lambda: s.compile("openai"), lambda: s.push_user("x"), lambda: s.route({"name": "a"}), lambda: s.turn):
        with pytest.raises(chef.ClosedError):
            f()


def test_hostile_input_in_a_child_interpreter_does_not_crash_it() -> None:
    code = """
import chef, random
random.seed(7)
s = chef.Chef(level=3)
junk = [None, 1, -1, 2**63, "x" * 10000, "\\ud800", b"\\x00", [], {}, {"name": None}, [{"name": ""}], 1e308]
for j in junk:
    for f in (s.register_tools, s.push, s.route, s.set_prune_policy, s.set_system_prompt, s.check_tool_call):
        try:
            f(j)
        except (chef.ChefError, TypeError, ValueError):
            pass
for t in chef.TARGETS:
    for j in junk:
        try:
            s.push_reply(t, j)
        except (chef.ChefError, TypeError, ValueError):
            pass
print("alive")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "alive"


def test_a_tool_compression_cannot_take_is_refused_when_registered() -> None:
    # It was taken, and every compile raised CompressError after (session 41's audit).
    s = chef.Chef()
    s.register_tools([TOOL])
    with pytest.raises(chef.CompressError) as e:
        s.register_tools([TOOL, {"name": "shout", "inputSchema": {"type": "string"}}])
    assert "shout" in str(e.value), str(e.value)
    s.push_user("hi")
    s.compile("openai")  # the registry is as it was
