"""The same session driven from Python and from Rust gives byte-identical request bodies on
every target: each script runs through the Python API here and through the Rust API in
examples/session_script.rs, and the printed lines (every compiled body in hex, every
routing outcome, every parsed reply's call count) must match."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

import chef
from conftest import REAL_TOOLS, ROOT

TARGETS = ["anthropic", "openai", "openai-responses", "gemini"]

FS_TOOLS = [
    {"name": "fs_read_file", "description": "Read a file.",
     "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
    {"type": "function", "function": {"name": "fs_delete_file", "description": "Delete a file.",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
    {"name": "web.search", "description": "Search the web.",
     "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}},
    {"functionDeclarations": [{"name": "calendar_add", "description": "Add an event.",
     "parameters": {"type": "object", "properties": {"title": {"type": "string"}, "when": {"type": "string"}}}}]},
]


def replies(target: str, call_id: str, name: str, arguments: Dict[str, Any]) -> Dict[str, Any]:
    args = json.dumps(arguments)
    if target == "anthropic":
        return {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "stop_reason": "tool_use",
                "usage": {"input_tokens": 1, "output_tokens": 1},
                "content": [{"type": "text", "text": "Working on it."},
                            {"type": "tool_use", "id": call_id, "name": name, "input": arguments}]}
    if target == "openai":
        return {"id": "c", "object": "chat.completion", "model": "m", "choices": [{"index": 0,
                "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None,
                "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}]}}]}
    if target == "openai-responses":
        return {"id": "r", "object": "response", "model": "m", "status": "completed",
                "output": [{"type": "function_call", "id": "fc", "call_id": call_id, "name": name, "arguments": args}]}
    return {"candidates": [{"index": 0, "finishReason": "STOP", "content": {"role": "model",
            "parts": [{"functionCall": {"id": call_id, "name": name, "args": arguments}}]}}]}


def script(level: int, target: str, **config: Any) -> Dict[str, Any]:
    """A session exercising what changes bytes: tools in every input shape, a real corpus,
    namespaces, toolkits, system prompt, memory, a blocklist, pruning, replies parsed with
    the compile's wire names, tool results, and a compile of every target at several points."""
    steps: List[Dict[str, Any]] = [
        {"op": "register_tools", "tools": FS_TOOLS, "file": "tests/fixtures/real-mcp-tools.json"},
        {"op": "register_toolkits", "groups": [{"name": "Calendar", "description": "Calendar tools",
         "tools": [{"name": "cal_list", "inputSchema": {"type": "object", "properties": {"day": {"type": "string"}}}}]}]},
        {"op": "set_system_prompt", "text": "You manage files and freight. Ünïcode ✓ \"quotes\" \\ and \u2028."},
        {"op": "memory_set", "key": "lang", "value": "Rust"},
        {"op": "push_user", "text": "Read /tmp/x, then delete it."},
    ]
    steps += [{"op": "compile", "target": t} for t in TARGETS]
    steps += [
        {"op": "compile", "target": target},
        {"op": "push_reply", "target": target,
         "reply": replies(target, "call_1", "web_search" if level < 2 else "t", {"q": "chef"} if level < 2 else {"f": "zz", "a": {}})},
        {"op": "route", "call": {"id": "call_1", "name": "fs_read_file", "arguments": {"path": "/tmp/x"}}},
        {"op": "route", "call": {"id": "call_2", "name": "FS-Delete-File", "arguments": {"path": "/tmp/x"}}},
        {"op": "route", "call": {"id": "call_3", "name": "load_toolkit", "arguments": {"toolkit_name": "Calendar"}}},
        {"op": "push_tool_result", "call_id": "call_1", "text": "contents of x"},
        {"op": "push", "message": {"role": "user", "content": [{"type": "text", "text": "And the weather?"}],
                                   "cache_breakpoint": True}},
        {"op": "set_blocked_tools", "names": ["fs_delete_file", "cancel_order"]},
    ]
    steps += [{"op": "compile", "target": t} for t in TARGETS]
    steps += [
        {"op": "set_prune_policy", "policy": {"policy": "ranked", "top_k": 5, "always_keep": ["fs_read_file"]}},
        {"op": "set_task", "task": "track a freight order"},
    ]
    steps += [{"op": "compile", "target": t} for t in TARGETS]
    return {"config": {"level": level, "memory": True, **config}, "steps": steps}


def run_python(spec: Dict[str, Any]) -> List[str]:
    cfg = spec["config"]
    compiled = None
    if "compiled" in cfg:
        compiled = json.loads((ROOT / cfg["compiled"]).read_text())
    session = chef.Chef(level=cfg["level"], memory=cfg.get("memory", False), compiled=compiled,
                        tools_mode=cfg.get("tools_mode", "legacy"), cache=cfg.get("cache", True),
                        announce_tool_changes=cfg.get("announce_tool_changes", False))
    out: List[str] = []
    for step in spec["steps"]:
        op = step["op"]
        if op == "register_tools":
            session.register_tools(step.get("tools", []) + (REAL_TOOLS if "file" in step else []))
        elif op == "register_toolkits":
            session.register_toolkits(step["groups"])
        elif op == "set_system_prompt":
            session.set_system_prompt(step["text"])
        elif op == "memory_set":
            session.memory_set(step["key"], step["value"])
        elif op == "push_user":
            session.push_user(step["text"])
        elif op == "push":
            session.push(step["message"])
        elif op == "push_reply":
            # The reply as the provider's bytes, as an SDK's raw response gives them.
            calls = session.push_reply(step["target"], json.dumps(step["reply"]).encode())
            out.append(f"calls {len(calls)}")
        elif op == "push_tool_result":
            session.push_tool_result(step["call_id"], step["text"], step.get("is_error", False))
        elif op == "route":
            routed = session.route(step["call"])
            kind = {chef.Call: "call", chef.Owned: "owned", chef.ToolkitLoaded: "toolkit_loaded",
                    chef.Lookup: "lookup", chef.Blocked: "blocked", chef.Rejected: "rejected"}[type(routed)]
            if isinstance(routed, (chef.Call, chef.Blocked)):
                name = routed.name
            elif isinstance(routed, chef.ToolkitLoaded):
                name = routed.toolkit
            elif isinstance(routed, chef.Rejected):
                name = routed.tool or "-"
            elif isinstance(routed, chef.Owned):
                name = routed.name
            else:
                name = "-"
            out.append(f"route {kind} {name}")
        elif op == "set_blocked_tools":
            session.set_blocked_tools(step["names"])
        elif op == "set_prune_policy":
            session.set_prune_policy(step["policy"])
        elif op == "set_task":
            session.set_task(step["task"])
        elif op == "compile":
            out.append(f"compile {step['target']} {session.compile(step['target']).body.hex()}")
        else:
            raise AssertionError(op)
    return out


def run_rust(binary: Path, spec: Dict[str, Any], tmp_path: Path) -> List[str]:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(spec))
    done = subprocess.run([str(binary), str(path)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_python_and_rust_compile_the_same_bytes(session_script: Path, tmp_path: Path, level: int, target: str) -> None:
    spec = script(level, target)
    rust = run_rust(session_script, spec, tmp_path)
    python = run_python(spec)
    assert len(python) == len(rust)
    compiles = [line for line in python if line.startswith("compile ")]
    assert len(compiles) == 13
    for p, r in zip(python, rust):
        assert p == r, f"differs: {p[:120]}… vs {r[:120]}…"
    # Each target's body is the provider's JSON (and so parses), not only equal.
    for line in compiles:
        json.loads(bytes.fromhex(line.split(" ", 2)[2]))


@pytest.mark.parametrize("target", TARGETS)
def test_other_settings_compile_the_same_bytes(session_script: Path, tmp_path: Path, target: str) -> None:
    """The unified owned tool, tool-change announcements and no cache breakpoints."""
    spec = script(1, target, tools_mode="unified", announce_tool_changes=True, cache=False)
    assert run_python(spec) == run_rust(session_script, spec, tmp_path)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("level", [1, 4])
def test_the_compiled_map_compiles_the_same_bytes(session_script: Path, tmp_path: Path, level: int, target: str) -> None:
    """Level 4 (and level 1's descriptions) from the committed compiled map of the corpus."""
    spec = script(level, target, compiled="tests/fixtures/real-mcp-tools.compiled-map.json")
    python = run_python(spec)
    assert python == run_rust(session_script, spec, tmp_path)
    assert any("accessorial_revenue_details(" in bytes.fromhex(l.split(" ", 2)[2]).decode()
               for l in python if l.startswith("compile "))
