"""The gate holds from Python on every route the Rust probe covers
(crates/chef/tests/it/gate_bypass.rs): exact name, letter case, whitespace, separator and
camel-case variants, level-3 codes (in `t`, as the tool name, after `q`, nested, as a
JSON string), level-2 compound ops, namespace actions, blocked namespaces, toolkits and
their loader, owned tools; unknown names are never dispatched; blocking never changes
the request bytes."""

from __future__ import annotations

import json
from typing import Any, Dict

import pytest

import chef

BLOCKED = "fs_delete_file"
PATH = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
TOOLS = [
    {"name": "fs_read_file", "description": "Read a file.", "inputSchema": PATH},
    {"name": BLOCKED, "description": "Delete a file.", "inputSchema": PATH},
    {"name": "fs_list_dir", "description": "List a directory.", "inputSchema": PATH},
    {"name": "web_search", "description": "Search the web.",
     "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}},
]
ARGS = {"path": "/tmp/x"}


def session(level: int) -> chef.Chef:
    s = chef.Chef(level=level)
    s.register_tools(TOOLS)
    s.set_system_prompt("You manage files.")
    s.push_user("Clean up the temp directory.")
    s.set_blocked_tools([BLOCKED])
    return s


def call(name: str, arguments: Any) -> Dict[str, Any]:
    return {"id": "c1", "name": name, "arguments": arguments}


def assert_blocked(s: chef.Chef, c: Any) -> None:
    routed = s.route(c)
    assert isinstance(routed, chef.Blocked), f"{c} got through the gate: {routed!r}"
    assert "is currently blocked" in routed.reply
    assert routed.name and routed.is_error
    checked = s.check_tool_call(c)
    assert isinstance(checked, chef.Blocked), checked


def test_01_exact_name_at_levels_0_and_1() -> None:
    for level in (0, 1):
        assert_blocked(session(level), call(BLOCKED, ARGS))


def test_02_other_letter_case() -> None:
    for level in (0, 1, 3):
        assert_blocked(session(level), call("FS_DELETE_FILE", ARGS))
        assert_blocked(session(level), call("Fs_Delete_File", ARGS))


def test_03_surrounding_whitespace() -> None:
    for level in (0, 1, 3):
        assert_blocked(session(level), call("  fs_delete_file\n", ARGS))


@pytest.mark.parametrize("alias", ["fs.delete_file", "fs-delete-file", "fs/delete_file", "fsDeleteFile", "fs delete file"])
def test_04_dotted_dashed_and_camel_aliases(alias: str) -> None:
    for level in (1, 3):
        assert_blocked(session(level), call(alias, ARGS))


def test_05_to_10_level_3_codes() -> None:
    s = session(3)
    code = s.code_for(BLOCKED)
    assert code
    assert_blocked(s, call("t", {"f": code, "a": ARGS}))  # 05: the dispatcher
    assert_blocked(s, call(code, ARGS))  # 06: the code as the tool name
    for f in (BLOCKED, "FS.Delete-File", "fsdeletefile"):  # 07: names in f
        assert_blocked(s, call("t", {"f": f, "a": ARGS}))
    lookup = s.route(call("q", {"s": "delete"}))  # 08: q never lists it, nor describes it
    assert isinstance(lookup, chef.Lookup) and code not in lookup.reply
    assert_blocked(s, call("q", {"c": code}))
    assert_blocked(s, call("t", {"f": code, "a": ARGS}))  # a code known from elsewhere
    assert_blocked(s, call("t", {"f": "t", "a": {"f": code, "a": ARGS}}))  # 09: nested
    assert_blocked(s, call("t", {"f": code, "path": "/tmp/x"}))  # 09: flat bag
    assert_blocked(s, call("t", json.dumps({"f": code, "a": ARGS})))  # 10: a JSON string
    assert_blocked(s, chef.ToolCall("c1", "t", json.dumps({"f": code, "a": ARGS})))


def test_11_level_2_compound_op() -> None:
    s = session(2)
    encoded = s.encode_call(BLOCKED, ARGS)
    assert encoded is not None and encoded.name == "fs"
    assert_blocked(s, encoded)
    assert_blocked(s, call("fs", {"op": "delete_file", "args": ARGS}))


def namespaced(level: int, blocked: str) -> chef.Chef:
    s = chef.Chef(level=level)
    s.register_namespaces([{"name": "file_ops", "description": "File operations",
                            "tools": [t for t in TOOLS if t["name"].startswith("fs_")]}])
    s.register_toolkits([{"name": "Web", "description": "Web access",
                          "tools": [t for t in TOOLS if t["name"] == "web_search"]}])
    s.push_user("go")
    s.set_blocked_tools([blocked])
    return s


def test_12_namespace_action() -> None:
    for level in (0, 1, 3):
        s = namespaced(level, BLOCKED)
        ns_call = call("file_ops", {"action": BLOCKED, "args": ARGS})
        assert_blocked(s, ns_call)
        if level == 3:
            code = s.code_for("file_ops")
            assert_blocked(s, call("t", {"f": code, "a": {"action": BLOCKED, "args": ARGS}}))
        assert_blocked(s, call("file_ops", {"action": BLOCKED, "path": "/x"}))
        assert_blocked(s, call("file_ops", {"action": "FS_DELETE_FILE", "args": ARGS}))
        allowed = s.route(call("file_ops", {"action": "fs_read_file", "args": ARGS}))
        assert isinstance(allowed, chef.Call) and allowed.via == "file_ops"


def test_13_a_blocked_namespace_blocks_every_action() -> None:
    assert_blocked(namespaced(1, "file_ops"), call("file_ops", {"action": "fs_read_file", "args": ARGS}))


def test_14_toolkit_tool_after_load_toolkit() -> None:
    s = namespaced(1, "web_search")
    loaded = s.route(call("load_toolkit", {"toolkit_name": "Web"}))
    assert isinstance(loaded, chef.ToolkitLoaded) and loaded.toolkit == "Web"
    s.compile("anthropic")
    assert_blocked(s, call("web_search", {"q": "x"}))


def test_15_blocked_toolkit_and_blocked_loader() -> None:
    assert_blocked(namespaced(1, "Web"), call("load_toolkit", {"toolkit_name": "Web"}))
    assert_blocked(namespaced(1, "load_toolkit"), call("load_toolkit", {"toolkit_name": "Web"}))


def test_16_owned_tools_are_gated_too() -> None:
    s = chef.Chef(tools_mode="unified")
    s.set_blocked_tools(["context"])
    assert_blocked(s, call("context", {"command": "view", "path": "notes/"}))


def test_17_unknown_names_are_not_dispatched() -> None:
    s = session(3)
    for c in (call("zz9", ARGS), call("", ARGS), call("t", {"f": "zz9"})):
        routed = s.route(c)
        assert not isinstance(routed, chef.Call), routed
        assert isinstance(routed, chef.Rejected) and routed.is_error


def test_allowed_tools_still_route_on_every_path() -> None:
    s = session(3)
    routed = s.route(call("t", {"f": s.code_for("fs_read_file"), "a": ARGS}))
    assert isinstance(routed, chef.Call)
    assert (routed.name, routed.arguments, routed.reply, routed.is_error) == ("fs_read_file", ARGS, None, False)


def test_blocking_never_changes_the_compiled_request() -> None:
    for target in chef.TARGETS:
        for level in (0, 1, 3):
            s = session(level)
            s.set_blocked_tools([])
            before = s.compile(target).body  # type: ignore[arg-type]
            s.set_blocked_tools([BLOCKED, "web_search"])
            assert s.compile(target).body == before, (target, level)  # type: ignore[arg-type]


def test_check_tool_call_changes_nothing() -> None:
    s = namespaced(1, BLOCKED)
    checked = s.check_tool_call(call("load_toolkit", {"toolkit_name": "Web"}))
    assert isinstance(checked, chef.ToolkitLoaded)
    assert s.loaded_toolkits == []
    s.route(call("load_toolkit", {"toolkit_name": "Web"}))
    assert s.loaded_toolkits == ["Web"]


def test_a_wire_name_reaches_the_tool_and_the_gate() -> None:
    s = chef.Chef(level=1)
    s.register_tools([{"name": "timezone.convert", "inputSchema": {"type": "object"}}])
    s.push_user("now?")
    payload = s.compile("openai")
    assert payload.names == {"timezone_convert": "timezone.convert"}
    s.set_blocked_tools(["timezone.convert"])
    assert_blocked(s, call("timezone_convert", {}))


def test_discovery_from_python_finds_by_real_name_and_never_finds_a_blocked_tool() -> None:
    """Issue 43: the discovery policy from Python — ranked tools plus find_tools; a search
    is answered by route as a Lookup; the found tool is offered from the next compile,
    after the tools already sent; a blocked tool is never found."""
    tools = TOOLS + [
        {"name": f"svc_op{i}", "description": f"Operation {i} of the billing service.",
         "inputSchema": PATH}
        for i in range(8)
    ]
    s = chef.Chef(level=1)
    s.register_tools(tools)
    s.set_prune_policy({"policy": "discover", "top_k": 2})
    s.set_blocked_tools([BLOCKED])
    s.push_user("Read the file /tmp/notes.txt")
    first = s.compile("openai").wire_tools
    assert "find_tools" in first and "web_search" not in first, first
    found = s.route({"id": "c1", "name": "find_tools", "arguments": {"query": "search the web"}})
    assert isinstance(found, chef.Lookup), found
    assert "web_search(" in found.reply, found.reply
    s.push({"role": "assistant", "content": [{"type": "tool_call", "id": "c1", "name": "find_tools",
                                                "arguments": {"query": "search the web"}}]})
    s.push_tool_result("c1", found.reply)
    after = s.compile("openai").wire_tools
    assert after[: len(first)] == first and "web_search" in after, after
    hidden = s.route({"id": "c2", "name": "find_tools", "arguments": {"query": "delete a file"}})
    assert isinstance(hidden, chef.Lookup) and "fs_delete_file(" not in hidden.reply, hidden.reply
