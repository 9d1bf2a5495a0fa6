"""The Python API: values, reprs, close semantics, memory and owned tools, snapshots, and
the GIL released during compile and search."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import List

import pytest

import chef
from conftest import REAL_TOOLS

WEATHER = {"name": "get_weather", "description": "Weather for a city.",
           "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


def test_compile_gives_bytes_names_and_a_dict_view() -> None:
    with chef.Chef(level=1) as s:
        assert s.register_tools([WEATHER, {"name": "tz.convert", "inputSchema": {"type": "object"}}]) == [
            "get_weather", "tz.convert"]
        s.set_system_prompt("Be brief.")
        s.push_user("Weather in Oslo?")
        p = s.compile("anthropic")
        assert type(p.body) is bytes and p.body is p.body  # one object, no copy per access
        assert bytes(p) is p.body and len(p) == len(p.body)
        assert p.names == {"tz_convert": "tz.convert"}
        assert p.wire_tools == ["get_weather", "tz.convert"]  # by real name; `names` has the renames
        assert p.json()["messages"][0]["role"] == "user"
        assert p.target == "anthropic" and p.turn == 0
        assert repr(p).startswith("Payload(target='anthropic', body=<")
        assert repr(s) == "Chef(level=1, tools=2, messages=1, turn=1, blocked=0)"
    assert s.closed


def test_memory_and_owned_tools() -> None:
    s = chef.Chef(memory=True)
    s.memory_set("lang", "Rust")
    assert s.memory_get("lang") == "Rust" and s.memory() == {"lang": "Rust"}
    s.push_user("remember my editor")
    p = s.compile("openai")
    assert "create_memory" in p.wire_tools
    owned = s.route({"id": "m1", "name": "create_memory", "arguments": {"key": "editor", "value": "helix"}})
    assert isinstance(owned, chef.Owned)
    reply = s.handle_tool(owned)
    assert not reply.is_error, reply
    assert s.memory_get("editor") == "helix"
    assert s.memory_delete("editor") and not s.memory_delete("editor")


def test_a_memory_value_over_the_limit_is_refused_with_a_message_for_the_model() -> None:
    s = chef.Chef(memory=True)
    long = "x" * 8001
    owned = s.route({"id": "m1", "name": "create_memory", "arguments": {"key": "notes", "value": long}})
    reply = s.handle_tool(owned)
    assert reply.is_error and "8,001 characters long" in reply.text, reply
    assert s.memory_get("notes") is None
    s.memory_set("notes", long)  # the host is not limited
    assert s.memory_get("notes") == long
    tight = chef.Chef(memory=True, memory_max_value_chars=3)
    reply = tight.handle_tool(tight.route({"id": "m2", "name": "create_memory", "arguments": {"key": "k", "value": "abcd"}}))
    assert reply.is_error and "at most 3" in reply.text, reply
    open_ = chef.Chef(memory=True, memory_max_value_chars=None)
    reply = open_.handle_tool(open_.route({"id": "m3", "name": "create_memory", "arguments": {"key": "k", "value": long}}))
    assert not reply.is_error, reply
    with pytest.raises(chef.InvalidInputError):
        chef.Chef(memory=True, memory_max_value_chars=-1)


def test_snapshot_round_trip_gives_the_same_next_request(tmp_path: Path) -> None:
    s = chef.Chef(level=3, memory=True)
    s.register_tools(REAL_TOOLS)
    s.set_blocked_tools(["cancel_order"])
    s.memory_set("lang", "Rust")
    s.push_user("Track order 7.")
    s.compile("gemini")
    s.save(tmp_path / "s.chef", label="turn 1")
    restored = chef.Chef.from_snapshot(str(tmp_path / "s.chef"), level=3)
    assert restored.blocked_tools == ["cancel_order"] and restored.memory_get("lang") == "Rust"
    for target in chef.TARGETS:
        assert restored.compile(target).body == s.compile(target).body  # type: ignore[arg-type]


def test_fork_and_search() -> None:
    template = chef.Chef(level=3)
    template.register_tools(REAL_TOOLS)
    template.compile("anthropic")
    a, b = template.fork(), template.fork()
    a.push_user("one")
    assert b.history() == [] and len(a.history()) == 1
    hits = template.search("cancel a freight order by tracking number", k=3)
    assert 0 < len(hits) <= 3 and all(isinstance(n, str) and isinstance(sc, float) for n, sc in hits)
    assert "cancel_order" in [n for n, _ in hits]


TRAVEL = [("book_flight", "Book a flight between two airports."),
          ("list_trips", "List the traveller's trips between two dates."),
          ("convert_currency", "Convert an amount from one currency to another."),
          ("translate_text", "Translate text into another language."),
          ("get_forecast", "Tomorrow's forecast for a city.")]


def _chat_text_reply(text: str) -> dict:
    return {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}]}


def test_a_small_model_constrained_recovered_and_finishing_with_final_answer() -> None:
    s = chef.Chef(level=1, answer_tool=True)
    s.register_tools([WEATHER])
    s.push_user("Weather in Oslo?")
    assert s.compile("openai").wire_tools == ["get_weather", "final_answer"]
    fmt = s.response_format()
    assert fmt is not None and fmt["type"] == "json_schema"
    names = [b["properties"]["name"]["const"] for b in fmt["json_schema"]["schema"]["anyOf"]
             if "name" in b.get("properties", {})]
    assert names == ["get_weather", "final_answer"]
    # The call written as text: recovered only when asked.
    text = '{"name": "get_weather", "arguments": {"city": "Oslo"}}'
    assert s.fork().push_reply("openai", _chat_text_reply(text)) == []
    calls = s.push_reply("openai", _chat_text_reply(text), recover_text_calls=True)
    assert [c.name for c in calls] == ["get_weather"]
    assert isinstance(s.route(calls[0]), chef.Call)
    s.push_tool_result(calls[0].id, "Sunny, 21 C.")
    s.compile("openai")
    done = '{"name": "final_answer", "arguments": {"answer": "Sunny in Oslo."}}'
    assert s.push_reply("openai", _chat_text_reply(done), recover_text_calls=True) == []
    assert s.history()[-1]["content"] in ("Sunny in Oslo.", [{"type": "text", "text": "Sunny in Oslo."}])


def test_search_with_a_sentence_finds_what_its_catalogue_words_find() -> None:
    s = chef.Chef(level=1)
    s.register_tools([{"name": n, "description": d, "inputSchema": {"type": "object"}} for n, d in TRAVEL])
    hits = s.search("please book a flight to Lisbon for Bob and Carol next Tuesday at 10am", k=3)
    assert hits and hits[0][0] == "book_flight", hits
    assert s.search("write a sonnet about the sea", k=3) == []


def test_search_leaves_out_blocked_tools_and_tools_off_the_allowlist() -> None:
    s = chef.Chef(level=1)
    s.register_tools([{"name": n, "description": d, "inputSchema": {"type": "object"}} for n, d in TRAVEL])
    query = "please book a flight to Lisbon for Bob and Carol next Tuesday at 10am"
    everything = [name for name, _ in s.search(query, k=len(TRAVEL))]
    assert everything[0] == "book_flight", everything
    both = "list my trips between two dates, then book a flight between two airports"
    ranked = [name for name, _ in s.search(both, k=len(TRAVEL))]
    assert ranked[:2] == ["book_flight", "list_trips"] or ranked[:2] == ["list_trips", "book_flight"], ranked
    s.set_blocked_tools(["BOOK-FLIGHT"])
    # Ranked, then dropped: it costs no place.
    assert [name for name, _ in s.search(both, k=len(TRAVEL))] == [n for n in ranked if n != "book_flight"]
    # The only tool that fits is blocked: nothing fits (not the next-ranked tools).
    assert s.search(query, k=len(TRAVEL)) == []
    s.set_blocked_tools([])
    s.set_allowlist(["list_trips"])
    assert [name for name, _ in s.search(both, k=3)] == ["list_trips"]
    assert s.search(query, k=3) == []


def test_a_reply_is_read_with_its_own_targets_wire_names() -> None:
    s = chef.Chef(level=1)
    s.register_tools([{"name": "a b:c", "inputSchema": {"type": "object"}}])
    s.push_user("hi")
    assert s.compile("openai").names == {"a_b_c": "a b:c"}
    assert s.compile("gemini").names == {"a_b:c": "a b:c"}  # compiled after, other names
    reply = {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
             "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                 "role": "assistant", "content": None, "tool_calls": [
                     {"id": "k1", "type": "function", "function": {"name": "a_b_c", "arguments": "{}"}}]}}]}
    assert [c.name for c in s.push_reply("openai", reply)] == ["a b:c"]


def test_sdk_objects_are_accepted_as_replies() -> None:
    ChatCompletion = pytest.importorskip("openai.types.chat").ChatCompletion

    s = chef.Chef(level=1)
    s.register_tools([{"name": "tz.convert", "inputSchema": {"type": "object"}}])
    s.push_user("time?")
    s.compile("openai")
    completion = ChatCompletion.model_validate({
        "id": "c", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None,
                     "tool_calls": [{"id": "k1", "type": "function",
                                     "function": {"name": "tz_convert", "arguments": "{}"}}]}}]})
    (call,) = s.push_reply("openai", completion)
    assert call.name == "tz.convert"  # the wire name mapped back
    assert isinstance(s.route(call), chef.Call)


def _spinner_stamps(work, rounds: int) -> int:
    """How many times a pure-Python thread ran while `work` was inside chef. The switch
    interval is made huge, so the main thread never hands the GIL over by force: the
    spinner runs inside a window only if chef released the GIL there."""
    stamps: List[float] = []
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0)  # gives the GIL back each round

    old = sys.getswitchinterval()
    sys.setswitchinterval(30.0)
    t = threading.Thread(target=spin)
    t.start()
    windows = []
    try:
        for _ in range(rounds):
            start = time.perf_counter()
            work()
            windows.append((start, time.perf_counter()))
    finally:
        stop.set()
        sys.setswitchinterval(old)
        t.join()
    return sum(1 for s in stamps for a, b in windows if a < s < b)


def test_the_gil_is_released_during_compile_and_search() -> None:
    template = chef.Chef(level=0)
    template.register_tools(REAL_TOOLS)
    for i in range(400):
        template.push_user(f"message {i} " + "lorem ipsum " * 20)
    template.compile("openai")

    def compile_fresh() -> None:
        template.fork().compile("openai")  # no prefix cache in a fork: a full compile

    assert _spinner_stamps(compile_fresh, 10) > 0
    assert _spinner_stamps(lambda: template.search("cancel the freight order " * 40, k=10), 10) > 0


def test_a_session_is_shared_between_threads_safely() -> None:
    s = chef.Chef(level=3)
    s.register_tools(REAL_TOOLS)
    s.push_user("go")
    bodies: List[bytes] = []

    def worker() -> None:
        for _ in range(5):
            bodies.append(s.compile("anthropic").body)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(bodies) == 20 and len(set(bodies)) == 1


def test_the_loop_guard_names_a_repeated_answered_call_and_tells_the_model() -> None:
    def call(call_id: str) -> dict:
        return {"role": "assistant", "content": [
            {"type": "tool_call", "id": call_id, "name": "get_weather", "arguments": {"city": "Paris"}}]}

    notice = "You called `get_weather` again with the same arguments"
    for guard in (True, False):
        s = chef.Chef(repeat_notice=guard)
        s.register_tools([WEATHER])
        s.push_user("Weather in Paris?")
        s.push(call("1"))
        s.push_tool_result("1", "12 C")
        assert s.repeated_calls() is None
        s.push(call("2"))
        assert s.repeated_calls() == ["get_weather"]  # whether or not the notice is on
        s.push_tool_result("2", "12 C")
        assert (notice in s.compile("openai").body.decode()) is guard


def test_a_summariser_that_refers_to_its_session_does_not_keep_it_alive() -> None:
    import gc
    import weakref

    class Marker:
        pass

    marker = Marker()
    gone = weakref.ref(marker)
    s = chef.Chef(context_window=1000)
    s.set_summarizer(lambda request, s=s, marker=marker: "summary")
    f = s.fork()  # the fork holds the callable too, through its own reference
    del s, f, marker
    gc.collect()
    assert gone() is None, "the session, its fork and their summariser were not collected"

    # A session still in use keeps its summariser working.
    kept = chef.Chef(context_window=1000)
    kept.set_summarizer(lambda request, kept=kept: "summary")
    gc.collect()
    kept.push_user("hello " * 400)
    kept.request_new_context()
    kept.push_user("next")
    assert kept.overflow()["outcome"] in ("summarized", "not_needed"), kept.overflow()


def test_too_many_tools_is_refused_at_once_with_its_fields() -> None:
    s = chef.Chef()
    s.register_tools([{"name": f"t{i}", "description": "x", "inputSchema": {"type": "object"}} for i in range(10_001)])
    s.push_user("hi")
    with pytest.raises(chef.CompressError) as raised:
        s.compile("openai")
    assert raised.value.variant == "TooManyTools"
    assert raised.value.fields == {"count": 10_001, "limit": 10_000}
