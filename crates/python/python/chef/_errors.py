"""chef's exceptions: one class per kind of Rust error, all under `ChefError`."""

from __future__ import annotations

from typing import Any, Dict, List


class ChefError(Exception):
    """A chef operation failed.

    Attributes carry what the Rust error carries:
      message: the error's text (``str(error)`` is it followed by each cause it does not
        already say: ``"snapshot i/o failed at s.chef: No such file or directory (os error 2)"``);
      kind: which error (``"registry"``, ``"snapshot"``, ``"tool_load"``, …);
      variant: the Rust variant (``"DuplicateTool"``, ``"NotASnapshot"``, …);
      fields: the variant's data a program acts on (a dict);
      causes: the messages of the error's sources, outermost first;
      detail: the Rust error's debug form, every field included.
    """

    def __init__(
        self,
        message: str,
        kind: str = "other",
        variant: str = "",
        fields: Dict[str, Any] | None = None,
        causes: List[str] | None = None,
        detail: str = "",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.variant = variant
        self.fields: Dict[str, Any] = dict(fields or {})
        self.causes: List[str] = list(causes or [])
        self.detail = detail

    def __str__(self) -> str:
        text = self.message
        for cause in self.causes:
            if cause and cause not in text:
                text += ": " + cause
        return text

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, kind={self.kind!r}, variant={self.variant!r}, fields={self.fields!r})"


class InvalidInputError(ChefError, ValueError):
    """A value from Python that chef cannot use (not JSON, an unknown target, a malformed message)."""


class ClosedError(ChefError, RuntimeError):
    """The session was closed."""


class ToolLoadError(ChefError, ValueError):
    """A tool document could not be loaded; ``fields`` says where (``index``, ``field``, ``line``…)."""


class ResponseError(ChefError, ValueError):
    """A provider's reply could not be parsed."""


class RegistryError(ChefError):
    """A registration was refused (a duplicate tool or group, a nested group…)."""


class CompressError(ChefError):
    """The tool set could not be compressed."""


class SchemaError(ChefError):
    """A tool's schema is unusable."""


class ProviderError(ChefError):
    """A provider crate could not compile the request (``fields["target"]``)."""


class ChefMemoryError(ChefError):
    """Memory refused an operation, or the session has none."""


class StoreError(ChefError):
    """The store failed."""


class SnapshotError(ChefError):
    """A snapshot could not be saved or loaded (missing, corrupt, newer, not a snapshot)."""


class SummarizeError(ChefError):
    """Summarising the history failed."""


class DynamicStateError(ChefError):
    """Dynamic state could not be set."""


class InjectError(ChefError):
    """A context injector failed."""


class DuplicateWireToolError(ChefError):
    """Two tools of one name would be sent."""


class NotOwnedError(ChefError):
    """``handle_tool`` was given a tool chef does not own."""


class UnknownSkillError(ChefError):
    """No skill of that name is registered."""


class SchemaWarning(UserWarning):
    """A tool's input schema was read with changes (an unknown ``type`` dropped, ``float``
    read as ``number``, a ``$ref`` inlined, …): the tool is registered and validated
    against the schema as read. One warning per tool, listing each change."""


__all__ = [
    "SchemaWarning",
    "ChefError",
    "InvalidInputError",
    "ClosedError",
    "ToolLoadError",
    "ResponseError",
    "RegistryError",
    "CompressError",
    "SchemaError",
    "ProviderError",
    "ChefMemoryError",
    "StoreError",
    "SnapshotError",
    "SummarizeError",
    "DynamicStateError",
    "InjectError",
    "DuplicateWireToolError",
    "NotOwnedError",
    "UnknownSkillError",
]
