"""Route outcomes in a `match` statement (Python 3.10 and later: conftest.py leaves this
file out on 3.9), and their reprs."""

from __future__ import annotations

import chef

WEATHER = {"name": "get_weather", "description": "Weather for a city.",
           "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


def test_route_outcomes_match_and_repr() -> None:
    s = chef.Chef(level=3)
    s.register_tools([WEATHER])
    s.push_user("Weather?")
    s.compile("openai")
    routed = s.route(chef.ToolCall("c1", "t", {"f": s.code_for("get_weather"), "a": {"city": "Oslo"}}))
    match routed:
        case chef.Call(id, name, arguments, via):
            assert (id, name, arguments, via) == ("c1", "get_weather", {"city": "Oslo"}, None)
        case _:
            raise AssertionError(routed)
    assert repr(routed) == "Call(id='c1', name='get_weather', arguments={'city': 'Oslo'}, via=None)"
    bad = s.route({"id": "c2", "name": "t", "arguments": {"f": s.code_for("get_weather"), "a": {}}})
    assert isinstance(bad, chef.Rejected) and bad.error == "resolve" and bad.tool == "get_weather"
    assert "city" in bad.reply and bad.is_error
    call = chef.ToolCall("c3", "q", {"s": "weather"})
    assert call == chef.ToolCall("c3", "q", {"s": "weather"})
    assert call.to_dict() == {"id": "c3", "name": "q", "arguments": {"s": "weather"}}
    assert repr(call) == "ToolCall(id='c3', name='q', arguments={'s': 'weather'})"
