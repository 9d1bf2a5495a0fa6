"""The stubs (python/chef/_chef.pyi) type a typed user's code: mypy --strict accepts
typed_usage.py, and rejects a wrong use."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def mypy(path: Path) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mypy")
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(path)],
        capture_output=True, text=True, cwd=HERE,
    )


def test_typed_usage_type_checks() -> None:
    done = mypy(HERE / "typed_usage.py")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_wrong_use_is_caught(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import chef\n\ns = chef.Chef(level='three')\nb: str = s.compile('openai').body\ns.compile('claude')\n")
    done = mypy(bad)
    assert done.returncode == 1
    assert done.stdout.count("error:") == 3, done.stdout
