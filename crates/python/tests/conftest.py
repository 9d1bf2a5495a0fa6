"""Shared fixtures of the Python tests (run with pytest from crates/python)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, List

import pytest

HERE = Path(__file__).resolve().parent
CRATE = HERE.parent
ROOT = CRATE.parent.parent
sys.path.insert(0, str(CRATE / "examples"))

# The SDK and type-checker tests skip when openai, anthropic or mypy is missing (Python 3.9
# has no openai 3.x); CHEF_REQUIRE_SDKS=1 (.ci/run) makes a missing one an error instead.
if os.environ.get("CHEF_REQUIRE_SDKS") == "1":
    import anthropic  # noqa: F401
    import mypy  # noqa: F401
    import openai  # noqa: F401

# test_match.py uses the `match` statement, which Python 3.9 cannot parse.
collect_ignore = ["test_match.py"] if sys.version_info < (3, 10) else []

REAL_TOOLS: List[Any] = json.loads((ROOT / "tests" / "fixtures" / "real-mcp-tools.json").read_text())


@pytest.fixture(scope="session")
def session_script() -> Path:
    """The Rust driver of session scripts (examples/session_script.rs): $CHEF_SESSION_SCRIPT,
    or built here with cargo (the `ci` profile, nothing else of the workspace)."""
    given = os.environ.get("CHEF_SESSION_SCRIPT")
    if given:
        return Path(given)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    subprocess.run(
        ["cargo", "build", "--quiet", "--profile", "ci", "-p", "chef-python", "--example", "session_script"],
        cwd=ROOT,
        check=True,
    )
    return target / "ci" / "examples" / "session_script"
