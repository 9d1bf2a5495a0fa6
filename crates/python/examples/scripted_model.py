"""A scripted model on 127.0.0.1 for the example agent loops: no model, no network.

Each POST gets the next canned reply from a list of functions (request dict -> reply dict);
the raw request bodies are kept in `bodies`, so a test can check that what went on the
wire is exactly what chef compiled.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List

Reply = Callable[[Dict[str, Any]], Dict[str, Any]]


def code_of(request: Dict[str, Any], name: str) -> str:
    """The code the request's <toolmap> gives `name` (level 3), as a model reads it."""
    text = "\n".join(_strings({k: v for k, v in request.items() if k != "tools"}))
    match = re.search(r"^(\S+) " + re.escape(name) + r"\b", text, re.M)
    if not match:
        raise AssertionError(f"{name} is not in the toolmap")
    return match.group(1)


def _strings(value: Any) -> List[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


class ScriptedModel:
    def __init__(self, replies: List[Reply]) -> None:
        self.replies = list(replies)
        self.bodies: List[bytes] = []
        self.paths: List[str] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers["content-length"]))
                model.bodies.append(raw)
                model.paths.append(self.path)
                if model.replies:
                    status, reply = 200, model.replies.pop(0)(json.loads(raw))
                else:
                    status, reply = 500, {"error": {"message": "the script is over"}}
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "ScriptedModel":
        self.thread.start()
        return self

    def __exit__(self, *args: object) -> None:
        self.server.shutdown()
        self.server.server_close()
