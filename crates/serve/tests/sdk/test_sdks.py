#!/usr/bin/env python3
"""chef serve with the official, unmodified `openai` and `anthropic` Python SDKs.

Usage: test_sdks.py PATH/TO/chef

Starts a scripted model server (stdlib http.server on 127.0.0.1) and `chef serve` in front
of it (level 3, `cancel_order` blocked), then drives the gateway with the SDKs and the 149
real tools of tests/fixtures/real-mcp-tools.json. The scripted model checks that it
received the compressed tool block (`t` and `q` only, with the `<toolmap>`), reads tool
codes from that map as a model would, and answers with `t` / `q` calls in each API's wire
format. Exits non-zero on the first failed check.
"""

import json
import os
import queue
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anthropic
import openai

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
TOOLS = json.load(open(os.path.join(ROOT, "tests", "fixtures", "real-mcp-tools.json")))
assert len(TOOLS) == 149

ORDER_ARGS = {"trackingNumber": "737U2663137"}

# ---- the scripted model --------------------------------------------------------------

SCRIPT = queue.Queue()  # callables: request JSON -> ("json", body) | ("sse", text)
SEEN = []  # (path, headers, request JSON)


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)


def code_of(request, name):
    """The code the request's <toolmap> gives `name`, as a model reads it."""
    text = "\n".join(strings({k: v for k, v in request.items() if k != "tools"}))
    assert "<toolmap>" in text, "no toolmap in the request"
    match = re.search(r"^(\S+) " + re.escape(name) + r"\b", text, re.M)
    assert match, f"{name} is not in the toolmap"
    return match.group(1)


def wire_tools(request):
    return [t.get("name") or t["function"]["name"] for t in request.get("tools", [])]


class Upstream(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        SEEN.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        assert wire_tools(body) == ["t", "q"], wire_tools(body)
        try:
            kind, reply = SCRIPT.get_nowait()(body)
        except queue.Empty:
            kind, reply = "error", None
        if kind == "json":
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif kind == "sse":
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            for i in range(0, len(reply), 37):
                self.wfile.write(reply[i : i + 37].encode())
                self.wfile.flush()
        else:
            self.send_response(500)
            self.end_headers()


def sse(events):
    out = ""
    for event, data in events:
        if event:
            out += f"event: {event}\n"
        out += f"data: {json.dumps(data)}\n\n"
    return out


# Replies in each API's wire format. `call` is (name, arguments) as the model writes it.


def chat(text=None, call=None, call_id="call_1"):
    message = {"role": "assistant", "content": text}
    if call:
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {"name": call[0], "arguments": json.dumps(call[1])}}
        ]
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if call else "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def chat_stream(text, call, call_id="call_1"):
    def chunk(delta, finish=None):
        return {"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    args = json.dumps(call[1])
    half = len(args) // 2
    events = [("", chunk({"role": "assistant", "content": ""})), ("", chunk({"content": text}))]
    events.append(("", chunk({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                              "function": {"name": call[0], "arguments": args[:half]}}]})))
    events.append(("", chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[half:]}}]})))
    events.append(("", chunk({}, "tool_calls")))
    events.append(("", {"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
                        "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}))
    return sse(events) + "data: [DONE]\n\n"


def messages(text=None, call=None, call_id="toolu_1"):
    content = []
    if text:
        content.append({"type": "text", "text": text})
    if call:
        content.append({"type": "tool_use", "id": call_id, "name": call[0], "input": call[1]})
    return {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": content,
        "stop_reason": "tool_use" if call else "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def messages_stream(text, call, call_id="toolu_1"):
    args = json.dumps(call[1])
    half = len(args) // 2
    return sse([
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_s", "type": "message", "role": "assistant", "model": "claude-test", "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {
            "type": "tool_use", "id": call_id, "name": call[0], "input": {}}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": args[:half]}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": args[half:]}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                           "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ])


def response(text=None, call=None, call_id="call_1", status="completed"):
    output = []
    if text:
        output.append({"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                       "content": [{"type": "output_text", "text": text, "annotations": []}]})
    if call:
        output.append({"type": "function_call", "id": "fc_1", "call_id": call_id, "name": call[0],
                       "arguments": json.dumps(call[1]), "status": "completed"})
    return {"id": "resp_1", "object": "response", "created_at": 1, "status": status, "model": "gpt-test",
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                      "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}


def response_stream(text, call, call_id="call_1"):
    done = response(text, call, call_id)
    start = dict(done, status="in_progress", output=[], usage=None)
    message, fc = done["output"]
    events = [
        ("response.created", {"type": "response.created", "sequence_number": 0, "response": start}),
        ("response.output_item.added", {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
                                        "item": dict(message, status="in_progress", content=[])}),
        ("response.content_part.added", {"type": "response.content_part.added", "sequence_number": 2, "item_id": "msg_1",
                                         "output_index": 0, "content_index": 0,
                                         "part": {"type": "output_text", "text": "", "annotations": []}}),
        ("response.output_text.delta", {"type": "response.output_text.delta", "sequence_number": 3, "item_id": "msg_1",
                                        "output_index": 0, "content_index": 0, "delta": text, "logprobs": []}),
        ("response.output_text.done", {"type": "response.output_text.done", "sequence_number": 4, "item_id": "msg_1",
                                       "output_index": 0, "content_index": 0, "text": text, "logprobs": []}),
        ("response.content_part.done", {"type": "response.content_part.done", "sequence_number": 5, "item_id": "msg_1",
                                        "output_index": 0, "content_index": 0,
                                        "part": {"type": "output_text", "text": text, "annotations": []}}),
        ("response.output_item.done", {"type": "response.output_item.done", "sequence_number": 6, "output_index": 0, "item": message}),
        ("response.output_item.added", {"type": "response.output_item.added", "sequence_number": 7, "output_index": 1,
                                        "item": dict(fc, arguments="", status="in_progress")}),
        ("response.function_call_arguments.delta", {"type": "response.function_call_arguments.delta", "sequence_number": 8,
                                                    "item_id": "fc_1", "output_index": 1, "delta": fc["arguments"]}),
        ("response.function_call_arguments.done", {"type": "response.function_call_arguments.done", "sequence_number": 9,
                                                   "item_id": "fc_1", "output_index": 1, "arguments": fc["arguments"]}),
        ("response.output_item.done", {"type": "response.output_item.done", "sequence_number": 10, "output_index": 1, "item": fc}),
        ("response.completed", {"type": "response.completed", "sequence_number": 11, "response": done}),
    ]
    return sse(events)


# Model behaviours: each reads the request as a model would.


def call_order(build, **kw):
    return lambda req: ("json", build(call=("t", {"f": code_of(req, "get_order_details"), "a": ORDER_ARGS}), **kw))


def lookup(build, **kw):
    return lambda req: ("json", build(call=("q", {"c": code_of(req, "get_order_details")}), **kw))


def bad_args(build, **kw):
    return lambda req: ("json", build(call=("t", {"f": code_of(req, "get_order_details"), "a": {}}), **kw))


def say(build, text):
    return lambda req: ("json", build(text=text))


def streamed(build, text, name="get_order_details", args=ORDER_ARGS, **kw):
    return lambda req: ("sse", build(text, ("t", {"f": code_of(req, name), "a": args}), **kw))


def streamed_lookup(build, text, **kw):
    return lambda req: ("sse", build(text, ("q", {"c": code_of(req, "get_order_details")}), **kw))


# ---- the checks ----------------------------------------------------------------------

CHAT_TOOLS = [{"type": "function", "function": {"name": t["name"], "description": t["description"],
                                                 "parameters": t["input_schema"]}} for t in TOOLS]
RESPONSES_TOOLS = [{"type": "function", "name": t["name"], "description": t["description"],
                    "parameters": t["input_schema"]} for t in TOOLS]
ANTHROPIC_TOOLS = [{"name": t["name"], "description": t["description"], "input_schema": t["input_schema"]}
                   for t in TOOLS]


def script(*steps):
    SEEN.clear()
    while not SCRIPT.empty():
        SCRIPT.get_nowait()
    for step in steps:
        SCRIPT.put(step)


def tool_results(request):
    """Every tool result in an upstream request, whatever the API."""
    out = []
    for m in request.get("messages", []):
        if m.get("role") == "tool":
            out.append(m)
        if isinstance(m.get("content"), list):
            out += [b for b in m["content"] if b.get("type") == "tool_result"]
    out += [i for i in request.get("input", []) if isinstance(i, dict) and i.get("type") == "function_call_output"]
    return out


def check_openai_chat(oa):
    script(call_order(chat))
    r = oa.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "Where is 737U2663137?"}],
                                   tools=CHAT_TOOLS)
    call = r.choices[0].message.tool_calls[0]
    assert call.function.name == "get_order_details", call
    assert json.loads(call.function.arguments) == ORDER_ARGS
    assert SEEN[0][1].get("authorization") == "Bearer sk-test-openai"
    print("ok  openai chat: a t call comes back under its real name with parsed arguments")

    # Multi-turn: the client sends the result back; the model answers.
    script(say(chat, "It is in transit."))
    history = [{"role": "user", "content": "Where is 737U2663137?"}, r.choices[0].message.model_dump(exclude_none=True),
               {"role": "tool", "tool_call_id": call.id, "content": "In transit, due Friday."}]
    r2 = oa.chat.completions.create(model="gpt-test", messages=history, tools=CHAT_TOOLS)
    assert r2.choices[0].message.content == "It is in transit."
    sent = SEEN[0][2]
    replayed = [m for m in sent["messages"] if m.get("tool_calls")][0]["tool_calls"][0]["function"]
    assert replayed["name"] == "t", replayed  # the earlier call replayed as the model wrote it
    assert json.loads(replayed["arguments"])["a"] == ORDER_ARGS
    print("ok  openai chat: multi-turn, the earlier call replayed upstream as t")

    script(lambda req: ("json", chat(call=("t", {"f": code_of(req, "cancel_order"), "a": {"trackingNumber": "1"}}),
                                     call_id="call_c")),
           say(chat, "Cancelling is not allowed."))
    r = oa.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "Cancel order 1"}],
                                   tools=CHAT_TOOLS)
    assert r.choices[0].message.tool_calls is None
    assert r.choices[0].message.content == "Cancelling is not allowed."
    assert len(SEEN) == 2 and "blocked" in json.dumps(tool_results(SEEN[1][2]))
    print("ok  openai chat: a blocked tool is refused inside the gateway")

    script(streamed_lookup(chat_stream, "Let me look.", call_id="call_q"), streamed(chat_stream, "Found it."))
    stream = oa.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "Where is 737U2663137?"}],
                                        tools=CHAT_TOOLS, stream=True, stream_options={"include_usage": True})
    text, calls, usage = "", {}, None
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for tc in choice.delta.tool_calls or []:
                calls.setdefault(tc.index, {"name": "", "arguments": ""})
                calls[tc.index]["name"] += tc.function.name or ""
                calls[tc.index]["arguments"] += tc.function.arguments or ""
    assert text == "Let me look.\n\nFound it.", text
    assert [c["name"] for c in calls.values()] == ["get_order_details"], calls
    assert json.loads(calls[0]["arguments"]) == ORDER_ARGS
    assert usage.total_tokens == 30, usage
    assert len(SEEN) == 2
    print("ok  openai chat streaming: a q lookup inside, the call streamed under its real name, usage summed")

    # The SDK's own stream helper accumulates the same reply.
    script(streamed(chat_stream, "Found it."))
    with oa.chat.completions.stream(model="gpt-test", messages=[{"role": "user", "content": "Where?"}],
                                    tools=CHAT_TOOLS) as s:
        final = s.get_final_completion()
    tc = final.choices[0].message.tool_calls[0]
    assert tc.function.name == "get_order_details" and json.loads(tc.function.arguments) == ORDER_ARGS
    print("ok  openai chat streaming: the SDK's stream helper assembles the real call")


def check_openai_responses(oa):
    script(lookup(response, call_id="call_q"), call_order(response))
    r = oa.responses.create(model="gpt-test", input="Where is 737U2663137?", tools=RESPONSES_TOOLS)
    calls = [i for i in r.output if i.type == "function_call"]
    assert [c.name for c in calls] == ["get_order_details"], r.output
    assert json.loads(calls[0].arguments) == ORDER_ARGS
    assert r.usage.total_tokens == 30
    assert len(SEEN) == 2
    print("ok  openai responses: a q lookup inside, the call under its real name")

    script(streamed(response_stream, "Found it."))
    with oa.responses.stream(model="gpt-test", input="Where is 737U2663137?", tools=RESPONSES_TOOLS) as s:
        final = s.get_final_response()
    calls = [i for i in final.output if i.type == "function_call"]
    assert [c.name for c in calls] == ["get_order_details"], final.output
    assert final.output_text == "Found it."
    print("ok  openai responses streaming: the SDK's stream helper assembles the real call")


def check_anthropic(an):
    script(lookup(messages, call_id="toolu_q"), bad_args(messages, call_id="toolu_bad"), call_order(messages))
    r = an.messages.create(model="claude-test", max_tokens=256, tools=ANTHROPIC_TOOLS,
                           messages=[{"role": "user", "content": "Where is 737U2663137?"}])
    uses = [b for b in r.content if b.type == "tool_use"]
    assert [(u.name, u.input) for u in uses] == [("get_order_details", ORDER_ARGS)], r.content
    assert r.usage.input_tokens == 30 and r.usage.output_tokens == 15
    assert len(SEEN) == 3
    results = tool_results(SEEN[2][2])
    assert [x["tool_use_id"] for x in results] == ["toolu_q", "toolu_bad"]
    assert results[1].get("is_error") is True and "trackingNumber" in json.dumps(results[1])
    # Forwarded as the SDK sent it (x-api-key, or authorization in newer SDKs).
    sent = SEEN[0][1]
    assert "sk-ant-test" in (sent.get("x-api-key", "") + sent.get("authorization", "")), sorted(sent)
    assert sent.get("anthropic-version"), sorted(sent)
    print("ok  anthropic: a q lookup and a validation error resolved inside, the call under its real name")

    script(lambda req: ("json", messages(call=("t", {"f": code_of(req, "cancel_order"), "a": {"trackingNumber": "1"}}))),
           say(messages, "I may not cancel orders."))
    r = an.messages.create(model="claude-test", max_tokens=256, tools=ANTHROPIC_TOOLS,
                           messages=[{"role": "user", "content": "Cancel order 1"}])
    assert [b.type for b in r.content] == ["text"] and r.stop_reason == "end_turn"
    print("ok  anthropic: a blocked tool is refused inside the gateway")

    script(lambda req: ("sse", messages_stream("Looking. ", ("q", {"c": code_of(req, "get_order_details")}), "toolu_q")),
           streamed(messages_stream, "Found it."))
    with an.messages.stream(model="claude-test", max_tokens=256, tools=ANTHROPIC_TOOLS,
                            messages=[{"role": "user", "content": "Where is 737U2663137?"}]) as s:
        text = "".join(s.text_stream)
        final = s.get_final_message()
    assert text == "Looking. Found it.", text
    uses = [b for b in final.content if b.type == "tool_use"]
    assert [(u.name, u.input) for u in uses] == [("get_order_details", ORDER_ARGS)], final.content
    assert final.stop_reason == "tool_use"
    print("ok  anthropic streaming: the SDK's stream helper assembles the real call across an internal round")

    # Multi-turn with the SDK's own objects sent back.
    script(say(messages, "Due Friday."))
    r2 = an.messages.create(model="claude-test", max_tokens=256, tools=ANTHROPIC_TOOLS, messages=[
        {"role": "user", "content": "Where is 737U2663137?"},
        {"role": "assistant", "content": final.content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": uses[0].id, "content": "In transit."}]}])
    assert r2.content[0].text == "Due Friday."
    print("ok  anthropic: multi-turn with the streamed reply sent back")


def check_errors(oa, an, base):
    try:
        oa.chat.completions.create(model="gpt-test", messages="not a list", tools=CHAT_TOOLS)
        raise AssertionError("no error")
    except openai.BadRequestError as e:
        assert e.body["type"] == "invalid_request_error", e.body
    try:
        an.messages.create(model="claude-test", max_tokens=1, messages=[{"role": "robot", "content": "x"}])
        raise AssertionError("no error")
    except anthropic.BadRequestError as e:
        assert e.body["error"]["type"] == "invalid_request_error", e.body
    print("ok  errors: malformed requests raise the SDKs' own BadRequestError")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    chef = os.path.abspath(sys.argv[1])
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    up = f"http://127.0.0.1:{upstream.server_address[1]}/v1"
    port = free_port()
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(f'listen = "127.0.0.1:{port}"\n[upstream]\nopenai = "{up}"\nanthropic = "{up}"\n'
                f'[chef]\nlevel = 3\nblocked = ["cancel_order"]\n[limits]\nupstream_timeout_secs = 20\n')
        config = f.name
    gateway = subprocess.Popen([chef, "serve", "--config", config])
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(base + "/metrics", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        oa = openai.OpenAI(base_url=base + "/v1", api_key="sk-test-openai", max_retries=0)
        an = anthropic.Anthropic(base_url=base, api_key="sk-ant-test", max_retries=0)
        check_openai_chat(oa)
        check_openai_responses(oa)
        check_anthropic(an)
        check_errors(oa, an, base)
        print(f"all SDK checks passed (openai {openai.__version__}, anthropic {anthropic.__version__})")
    finally:
        gateway.terminate()
        gateway.wait(timeout=10)
        os.unlink(config)


if __name__ == "__main__":
    main()
