"""`chef mcp serve` driven by the official Python MCP SDK (`mcp` from PyPI), unmodified.

Usage: python test_mcp_serve.py CHEF_BINARY MCP_TEST_SERVER_BINARY

The proxy fronts two copies of the repo's rmcp test server (`files` with the extra tools,
`git`). Checked, over stdio in each mode and over streamable HTTP:
  - the advertised tools per mode (minify: every tool; dispatch: t with the map, and q;
    search: t and q, no map; discover, the default: find_tools, then what it finds by
    real name, announced with tools/list_changed; a blocked tool never found);
  - calls by code and by name (and with case/separator drift in minify);
  - q finds a tool;
  - a validation error and a blocked call come back as tool errors (isError);
  - progress notifications reach the caller;
  - an upstream that changes its tool list: tools/list_changed reaches the host, the new
    tool is listed and callable, and every earlier code stays where it was;
  - issue 47: blocklist entries by upstream name and with drift, the gate before
    validation, no did-you-mean naming a blocked tool, codes kept across a restart;
  - over HTTP, the session DELETE at the end is answered as the SDK expects (no
    "Session termination failed" warning);
  - an upstream killed mid-session: its tools are withdrawn (and announced), the other
    server keeps working, chef://status says why, and when it is back its codes are
    unchanged;
  - the SDK's high-level `Client` in its default mode negotiates a handshake version and
    its forwarded calls parse.
Exit status 0 when every check passed; every failure is printed.
"""

import asyncio
import json
import logging
import os
import re
import subprocess
import sys
import tempfile
import time

from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

CHEF, SERVER = sys.argv[1], sys.argv[2]
FAILURES = []


def check(cond, what):
    if cond:
        print(f"ok   {what}")
    else:
        print(f"FAIL {what}")
        FAILURES.append(what)


def config(directory, mode, refuse_file):
    path = os.path.join(directory, f"chef-mcp-{mode}.toml")
    with open(path, "w") as f:
        f.write(
            f"""mode = "{mode}"
blocklist = ["git_push"]
call_timeout = 20
[[server]]
name = "files"
command = "'{SERVER}' --set files --extra --refuse-if '{refuse_file}'"
[[server]]
name = "git"
command = "'{SERVER}' --set git"
"""
        )
    return path


def two_servers(directory, name, head):
    """A config file `name` in `directory`: `head`, then the plain files and git servers."""
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(
            f"""{head}
[[server]]
name = "files"
command = "'{SERVER}' --set files"
[[server]]
name = "git"
command = "'{SERVER}' --set git"
"""
        )
    return path


def text(result):
    return "".join(getattr(c, "text", "") for c in result.content)


def code_map(description):
    """`code name` pairs from t's description."""
    return dict(
        (m.group(2), m.group(1))
        for m in re.finditer(r"^([a-z]+\d+) ([A-Za-z0-9_]+)", description, re.M)
    )


class Notes:
    def __init__(self):
        self.list_changed = 0

    async def __call__(self, message):
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/tools/list_changed":
            self.list_changed += 1


async def wait_for(predicate, seconds, step=0.2):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await predicate():
            return True
        await asyncio.sleep(step)
    return False


async def t_description(session):
    tools = (await session.list_tools()).tools
    return next(t.description for t in tools if t.name == "t")


async def dispatch(directory):
    refuse = os.path.join(directory, "refuse")
    params = StdioServerParameters(
        command=CHEF, args=["mcp", "serve", "--config", config(directory, "dispatch", refuse)]
    )
    notes = Notes()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, message_handler=notes) as session:
            await session.initialize()

            async def both_up():
                return "git_status" in await t_description(session) and "files_read_file" in await t_description(session)

            check(await wait_for(both_up, 20), "dispatch: both upstreams' tools reach the map")
            tools = (await session.list_tools()).tools
            check(sorted(t.name for t in tools) == ["q", "t"], "dispatch: the host sees t and q")
            codes = code_map(await t_description(session))
            check("files_read_file" in codes and "git_push" in codes, f"dispatch: codes in t's description {codes}")

            r = await session.call_tool("q", {"s": "read a text file"})
            check("files_read_file" in text(r), "dispatch: q finds files_read_file")

            r = await session.call_tool("t", {"f": codes["files_read_file"], "a": {"path": "README.md"}})
            check(not r.is_error and text(r) == 'read_file {"path":"README.md"}', f"dispatch: call by code: {text(r)}")
            r = await session.call_tool("t", {"f": "files_read_file", "a": {"path": "a.txt"}})
            check(not r.is_error and "a.txt" in text(r), "dispatch: call by real name")

            r = await session.call_tool("t", {"f": codes["files_read_file"], "a": {"path": 5}})
            check(r.is_error and "path" in text(r), f"dispatch: a validation error is a tool error: {text(r)}")
            r = await session.call_tool("t", {"f": codes["git_push"], "a": {}})
            check(r.is_error and "blocked" in text(r), f"dispatch: the blocklist refuses git_push: {text(r)}")

            progress = []

            async def on_progress(value, total, message):
                progress.append(value)

            r = await session.call_tool(
                "t", {"f": codes["files_sleep"], "a": {"seconds": 0.3}}, progress_callback=on_progress
            )
            check(not r.is_error and text(r) == "slept", "dispatch: a slow call completes")
            check(len(progress) >= 2, f"dispatch: progress reaches the host ({len(progress)} notifications)")
            # Notifications sent just before the answer are not overtaken by it (about one
            # call in thirty lost some before session 40).
            counts = []
            for _ in range(30):
                burst = []

                async def on_burst(value, total, message, burst=burst):
                    burst.append(value)

                r = await session.call_tool(
                    "t", {"f": codes["files_sleep"], "a": {"seconds": 0, "burst": 5}}, progress_callback=on_burst
                )
                counts.append(len(burst))
            check(counts == [5] * 30, f"dispatch: every progress notification before the answer arrives: {counts}")

            before = notes.list_changed
            r = await session.call_tool("t", {"f": codes["files_grow"], "a": {}})
            grown = text(r)

            async def announced():
                return notes.list_changed > before

            check(await wait_for(announced, 10), "list change: tools/list_changed reaches the host")
            now = code_map(await t_description(session))
            check(f"files_{grown}" in now, f"list change: the new tool files_{grown} is in the map")
            check(all(now.get(k) == v for k, v in codes.items()), "list change: every earlier code is unchanged")
            r = await session.call_tool("t", {"f": now.get(f"files_{grown}", "?"), "a": {}})
            check(not r.is_error and grown in text(r), "list change: the new tool is callable")

            # Kill the files server (it will not come back while `refuse` exists).
            open(refuse, "w").close()
            before = notes.list_changed
            r = await session.call_tool("t", {"f": codes["files_crash"], "a": {}})
            check(r.is_error, f"kill: the call that killed the server is an error: {text(r)}")

            async def withdrawn():
                return "files_read_file" not in await t_description(session)

            check(await wait_for(withdrawn, 10), "kill: the dead server's tools are withdrawn")
            async def withdrawal_announced():
                return notes.list_changed > before

            check(await wait_for(withdrawal_announced, 5), "kill: the withdrawal is announced")
            r = await session.call_tool("t", {"f": codes["git_status"], "a": {}})
            check(not r.is_error and text(r).startswith("status"), "kill: the other server keeps working")
            r = await session.call_tool("t", {"f": codes["files_read_file"], "a": {"path": "x"}})
            check(r.is_error and "not available" in text(r), f"kill: a withdrawn tool's code says so: {text(r)}")
            status = await session.read_resource("chef://status")
            status_text = "".join(getattr(c, "text", "") for c in status.contents)
            check("files: " in status_text and ("down" in status_text or "starting" in status_text), f"kill: chef://status says files is down: {status_text!r}")

            os.remove(refuse)

            async def back():
                return "files_read_file" in await t_description(session)

            check(await wait_for(back, 30), "kill: the server comes back")
            again = code_map(await t_description(session))
            check(all(again.get(k) == v for k, v in codes.items() if k.startswith("files_") and k != f"files_{grown}"), "kill: its codes are unchanged")
            r = await session.call_tool("t", {"f": codes["files_read_file"], "a": {"path": "b"}})
            check(not r.is_error and "b" in text(r), "kill: its tools work again")


async def minify(directory):
    params = StdioServerParameters(
        command=CHEF, args=["mcp", "serve", "--config", config(directory, "minify", "/nonexistent")]
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()

            async def listed():
                names = {t.name for t in (await session.list_tools()).tools}
                return "files_read_file" in names and "git_status" in names

            check(await wait_for(listed, 20), "minify: every upstream tool is listed")
            tools = (await session.list_tools()).tools
            check(len(tools) == 12, f"minify: 12 tools ({len(tools)})")
            meta = next(t for t in tools if t.name == "files_meta").meta or {}
            check(meta.get("com.example/ui") == "resource://meta", f"minify: a tool's _meta is kept ({meta})")
            schema = next(t for t in tools if t.name == "files_write_file").input_schema
            check(set(schema.get("properties", {})) == {"path", "text"}, "minify: schemas are kept")
            r = await session.call_tool("files_read_file", {"path": "p"})
            check(not r.is_error and text(r) == 'read_file {"path":"p"}', "minify: call by name")
            r = await session.call_tool("Files-Read-File", {"path": "p"})
            check(not r.is_error and "read_file" in text(r), f"minify: case and separator drift: {text(r)}")
            r = await session.call_tool("git_push", {"force": True})
            check(r.is_error and "blocked" in text(r), "minify: blocked")


async def promises(directory):
    """Issue 47 through the official SDK: a blocklist entry written as the upstream names
    the tool (and with other case and separators), the gate before validation, did-you-mean
    that never names a blocked tool, and codes kept across a restart."""
    path = two_servers(directory, "chef-mcp-promises.toml", 'mode = "dispatch"\nblocklist = ["push", "Files-Write-File"]')
    params = StdioServerParameters(command=CHEF, args=["mcp", "serve", "--config", path])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            codes = code_map(await t_description(session))
            for f in ["git_push", "GIT-PUSH", codes.get("git_push", "?"), "files_write_file"]:
                r = await session.call_tool("t", {"f": f, "a": {"force": "yes"}})
                check(r.is_error and "blocked" in text(r), f"promises: {f} is blocked: {text(r)}")
                check("boolean" not in text(r), f"promises: {f}'s parameters are not taught")
            r = await session.call_tool("t", {"f": "git_pushh", "a": {}})
            check(r.is_error and '"git_push"' not in text(r), f"promises: no did-you-mean names the blocked tool: {text(r)}")
            r = await session.call_tool("t", {"f": codes.get("git_status", "?"), "a": {}})
            check(not r.is_error and text(r).startswith("status"), "promises: the others still run")
    codes_file = os.path.join(directory, "chef-mcp-promises.codes.json")
    check(os.path.exists(codes_file), "promises: the codes are kept in chef-mcp-promises.codes.json")
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            again = code_map(await t_description(session))
            check(again == codes, "promises: after a restart every code names the same tool")


async def search_over_http(directory):
    cfg = config(directory, "search", "/nonexistent")
    proc = subprocess.Popen(
        [CHEF, "mcp", "serve", "--config", cfg, "--http", "127.0.0.1:0"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = None
        deadline = time.monotonic() + 20
        while url is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            m = re.search(r"chef mcp serve: (http://\S+/mcp)", line)
            if m:
                url = m.group(1)
        check(url is not None, "http: the proxy prints its URL")
        if url is None:
            return
        # The SDK logs a warning when the session DELETE at the end is not answered as it
        # expects (200 or 204): collect its warnings.
        warnings = []

        class Collect(logging.Handler):
            def emit(self, record):
                warnings.append(record.getMessage())

        sdk_log = logging.getLogger("mcp.client.streamable_http")
        sdk_log.addHandler(Collect(level=logging.WARNING))
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = (await session.list_tools()).tools
                check(sorted(t.name for t in tools) == ["q", "t"], "search over http: t and q")
                t = next(t for t in tools if t.name == "t")
                check("files_read_file" not in (t.description or ""), "search: no map in t")

                async def found():
                    r = await session.call_tool("q", {"s": "show the working tree status"})
                    return "git_status" in text(r)

                check(await wait_for(found, 20), "search over http: q finds git_status")
                r = await session.call_tool("t", {"f": "git_status", "a": {}})
                check(not r.is_error and text(r).startswith("status"), f"search over http: call by name {text(r)}")
        check(
            not any("termination failed" in w for w in warnings),
            f"http: the session DELETE is answered as the SDK expects: {warnings}",
        )
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def post_initialize(url, session=None, method="POST"):
    """One raw HTTP request to the proxy (stdlib only): an `initialize`, or a DELETE of
    `session`. Returns (status, session id header, body)."""
    import urllib.error
    import urllib.request

    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        }
    ).encode()
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if session:
        headers["mcp-session-id"] = session
    request = urllib.request.Request(url, data=None if method == "DELETE" else body, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("mcp-session-id"), response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, None, e.read().decode()


async def session_cap_over_http(directory):
    """`http_max_sessions`: past the cap a new session is refused, saying why; the open ones
    go on, and ending one makes room."""
    path = os.path.join(directory, "chef-mcp-cap.toml")
    with open(path, "w") as f:
        f.write(f"""mode = "search"\ncode_file = ""\nhttp_max_sessions = 2\n[[server]]\nname = "git"\ncommand = "'{SERVER}' --set git"\n""")
    proc = subprocess.Popen(
        [CHEF, "mcp", "serve", "--config", path, "--http", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True
    )
    try:
        url = None
        deadline = time.monotonic() + 20
        while url is None and time.monotonic() < deadline:
            m = re.search(r"chef mcp serve: (http://\S+/mcp)", proc.stderr.readline())
            if m:
                url = m.group(1)
        check(url is not None, "cap: the proxy prints its URL")
        if url is None:
            return
        first = await asyncio.to_thread(post_initialize, url)
        second = await asyncio.to_thread(post_initialize, url)
        check(first[0] == 200 and second[0] == 200 and first[1] and second[1], f"cap: two sessions open ({first[0]}, {second[0]})")
        third = await asyncio.to_thread(post_initialize, url)
        check(third[0] >= 400 and "2 MCP sessions open" in third[2], f"cap: a third is refused, saying why: {third}")
        gone = await asyncio.to_thread(post_initialize, url, first[1], "DELETE")
        check(gone[0] in (200, 204), f"cap: a session ends ({gone[0]})")
        again = await asyncio.to_thread(post_initialize, url)
        check(again[0] == 200, f"cap: then a new one opens ({again[0]})")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def discover_by_default(directory):
    """No `mode` line: discover mode. The host sees find_tools; what it finds joins the list
    by real name (announced), is called directly, and a blocked tool is never found."""
    path = two_servers(directory, "chef-mcp-default.toml", 'blocklist = ["git_push"]')
    params = StdioServerParameters(command=CHEF, args=["mcp", "serve", "--config", path])
    notes = Notes()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, message_handler=notes) as session:
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            check(names == ["find_tools"], f"discover (default): the host sees find_tools alone {names}")

            async def finds_read():
                r = await session.call_tool("find_tools", {"query": "read a text file"})
                return not r.is_error and "files_read_file" in text(r)

            before = notes.list_changed
            check(await wait_for(finds_read, 20), "discover: find_tools finds files_read_file")

            async def announced():
                return notes.list_changed > before

            check(await wait_for(announced, 10), "discover: tools/list_changed reaches the host")
            tools = (await session.list_tools()).tools
            names = [t.name for t in tools]
            check(names[0] == "find_tools" and "files_read_file" in names, f"discover: the found tool is listed by its real name {names}")
            schema = next((t.input_schema for t in tools if t.name == "files_read_file"), {})
            check("path" in schema.get("properties", {}), "discover: with the upstream's schema")
            r = await session.call_tool("files_read_file", {"path": "notes.txt"})
            check(not r.is_error and "notes.txt" in text(r), f"discover: a found tool is called by name: {text(r)}")
            r = await session.call_tool("files_read_file", {"path": 5})
            check(r.is_error and "path" in text(r), f"discover: its arguments are validated: {text(r)}")
            r = await session.call_tool("find_tools", {"query": "push commits to the remote"})
            check("git_push" not in text(r), f"discover: a blocked tool is never found: {text(r)}")
            r = await session.call_tool("git_push", {})
            check(r.is_error and "blocked" in text(r), f"discover: a blocked tool called by name is refused: {text(r)}")


async def default_client(directory):
    """The SDK's high-level `Client` as it comes (mode "auto"): it asks `server/discover`
    first and would run the 2026-07-28 protocol when offered. chef offers the handshake
    versions only (its sessions are built on `initialize` and list-changed notifications),
    so the client falls back to `initialize`, and forwarded results parse (on 2026-07-28
    they lacked `resultType` and every upstream call raised a ValidationError)."""
    path = two_servers(directory, "chef-mcp-client.toml", "")
    params = StdioServerParameters(command=CHEF, args=["mcp", "serve", "--config", path])
    notes = Notes()
    async with Client(params, message_handler=notes) as client:
        version = str(client.protocol_version)
        check(version <= "2025-11-25", f"default Client: a handshake version is negotiated ({version})")

        async def finds_read():
            r = await client.call_tool("find_tools", {"query": "read a text file"})
            return not r.is_error and "files_read_file" in text(r)

        check(await wait_for(finds_read, 20), "default Client: find_tools finds files_read_file")
        check(await wait_for(lambda: asyncio.sleep(0, notes.list_changed > 0), 10),
              "default Client: tools/list_changed reaches the host")
        r = await client.call_tool("files_read_file", {"path": "notes.txt"})
        check(not r.is_error and "notes.txt" in text(r), f"default Client: a forwarded call's result parses: {text(r)}")
        r = await client.call_tool("files_read_file", {"path": 5})
        check(r.is_error and "path" in text(r), f"default Client: validation error: {text(r)}")


async def main():
    with tempfile.TemporaryDirectory() as directory:
        await default_client(directory)
        await dispatch(directory)
        await minify(directory)
        await promises(directory)
        await search_over_http(directory)
        await session_cap_over_http(directory)
        await discover_by_default(directory)
    if FAILURES:
        print(f"{len(FAILURES)} checks failed", file=sys.stderr)
        sys.exit(1)
    print("all checks passed")


asyncio.run(main())
