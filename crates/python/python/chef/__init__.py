"""chef in Python, in-process.

A ``Chef`` is one agent session over chef's Rust runtime: register tools, push messages,
``compile(target)`` into the request bytes for Anthropic Messages, OpenAI Chat, OpenAI
Responses or Gemini, ``route(call)`` every call the model makes through the gate, and
snapshot the session to a file. See docs/PYTHON.md in the repository.
"""

from __future__ import annotations

from typing import Union

from ._chef import (
    TARGETS,
    Blocked,
    Call,
    Chef,
    Lookup,
    Owned,
    OwnedReply,
    Payload,
    Rejected,
    ToolCall,
    ToolkitLoaded,
    __version__,
)
from ._errors import (
    ChefError,
    ChefMemoryError,
    ClosedError,
    CompressError,
    DuplicateWireToolError,
    DynamicStateError,
    InjectError,
    InvalidInputError,
    NotOwnedError,
    ProviderError,
    RegistryError,
    ResponseError,
    SchemaError,
    SchemaWarning,
    SnapshotError,
    StoreError,
    SummarizeError,
    ToolLoadError,
    UnknownSkillError,
)

#: What ``Chef.route`` and ``Chef.check_tool_call`` return.
Routed = Union[Call, Owned, ToolkitLoaded, Lookup, Blocked, Rejected]

__all__ = [
    "TARGETS",
    "Blocked",
    "Call",
    "Chef",
    "Lookup",
    "Owned",
    "OwnedReply",
    "Payload",
    "Rejected",
    "Routed",
    "ToolCall",
    "ToolkitLoaded",
    "__version__",
    "ChefError",
    "ChefMemoryError",
    "ClosedError",
    "CompressError",
    "DuplicateWireToolError",
    "DynamicStateError",
    "InjectError",
    "InvalidInputError",
    "NotOwnedError",
    "ProviderError",
    "RegistryError",
    "ResponseError",
    "SchemaError",
    "SchemaWarning",
    "SnapshotError",
    "StoreError",
    "SummarizeError",
    "ToolLoadError",
    "UnknownSkillError",
]
