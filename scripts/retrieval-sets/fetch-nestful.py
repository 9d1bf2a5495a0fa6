#!/usr/bin/env python3
"""Builds the NESTFUL retrieval set from the `nestful-wrapper` package on PyPI.

    python3 scripts/retrieval-sets/fetch-nestful.py            # writes tests/fixtures/nestful-*
    python3 scripts/retrieval-sets/fetch-nestful.py --wheel W  # from a wheel already downloaded
    python3 scripts/retrieval-sets/fetch-nestful.py --check    # rebuild, compare, write nothing

Source: `nestful-wrapper` 0.1.7 (PyPI, wheel `py3-none-any`), the packaged data of NESTFUL
("a benchmark for evaluating LLMs on nested sequences of API calls", IBM Research). The
package and its data are under the Apache License 2.0 (the wheel's METADATA and
`dist-info/licenses/LICENSE`). Its data has four parts, each a catalogue (`*-spec.json`)
and requests labelled with the sequence of calls that answers them (`*-data.json`):
`non-executable-glaive` (64 tools), `non-executable-sgd` (30), `executable` (39) and
`complexfuncbench` (40). This script is chef's own conversion (python3 standard library
only); it changes the data as follows, which is the notice of modification the licence asks
for:

- the four catalogues are joined into one catalogue of 173 tools (no name occurs twice), in
  chef's catalogue shape (`server` = the part, `name`, `description`, `input_schema` as a
  JSON Schema object built from the part's `query_parameters`); output parameters, hosts
  and URLs are dropped;
- each request keeps its text (`input`, trimmed) and, as `expected`, the distinct tools its
  call sequence uses in order of first use (the `var_result` pseudo-call dropped);
- each request gets `split` (`calibrate` for the 1st, 3rd, … request of its part,
  `heldout` for the 2nd, 4th, …) and `source` (its part).

NESTFUL has no request that no tool answers, so the set measures ranking and false
abstention only. Every request needs two to seven tools.
"""

import argparse
import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile

PACKAGE = "nestful-wrapper"
VERSION = "0.1.7"
WHEEL = "nestful_wrapper-0.1.7-py3-none-any.whl"
SHA256 = "7e7b34b0491d6fb26e9670d6fca93f39a7cc9475e25962d39633889a04e26fe4"
PARTS = [
    ("nestful-glaive", "data_v1/non-executable/non-executable-glaive"),
    ("nestful-sgd", "data_v1/non-executable/non-executable-sgd"),
    ("nestful-executable", "data_v1/executable/executable"),
    ("nestful-complexfuncbench", "data_v1/complexfuncbench/complexfuncbench"),
]
HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.normpath(os.path.join(HERE, "..", "..", "tests", "fixtures"))
TOOLS_FILE = "nestful-tools.json"
LABELS_FILE = "nestful.jsonl"


def fail(message):
    print(f"fetch-nestful: {message}", file=sys.stderr)
    sys.exit(1)


def download(directory):
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
               f"{PACKAGE}=={VERSION}", "-d", directory]
    if subprocess.run(command, check=False).returncode != 0:
        fail(f"pip could not download {PACKAGE}=={VERSION}")
    return os.path.join(directory, WHEEL)


def checked(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != SHA256:
        fail(f"{path}: SHA-256 {digest.hexdigest()}, expected {SHA256}")
    return path


JSON_TYPES = {"string", "number", "integer", "boolean", "array", "object"}


def parameter_schema(spec):
    """One parameter's JSON Schema from a NESTFUL parameter entry."""
    schema = {}
    kind = spec.get("type")
    if isinstance(kind, str) and kind.lower() in JSON_TYPES:
        schema["type"] = kind.lower()
    elif isinstance(kind, str) and kind.lower() in ("int", "float", "double"):
        schema["type"] = "integer" if kind.lower() == "int" else "number"
    elif isinstance(kind, str) and kind.lower() in ("bool",):
        schema["type"] = "boolean"
    else:
        schema["type"] = "string"
    description = spec.get("description")
    if isinstance(description, str) and description.strip():
        schema["description"] = description.strip()
    values = spec.get("enum") or spec.get("allowed_values") or []
    if isinstance(values, list) and values and all(isinstance(v, str) for v in values):
        schema["enum"] = values
    if schema["type"] == "array":
        items = spec.get("items")
        schema["items"] = parameter_schema(items) if isinstance(items, dict) else {}
    return schema


def input_schema(parameters):
    properties, required = {}, []
    for name, spec in (parameters or {}).items():
        spec = spec if isinstance(spec, dict) else {}
        properties[name] = parameter_schema(spec)
        if spec.get("required") is True:
            required.append(name)
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def convert(wheel):
    tools, labels, names = [], [], set()
    with zipfile.ZipFile(wheel) as archive:
        def read(member):
            with archive.open(member) as f:
                return json.load(io.TextIOWrapper(f, encoding="utf-8"))

        for source, stem in PARTS:
            part_names = set()
            for spec in read(stem + "-spec.json"):
                name = spec["name"]
                if name in names:
                    fail(f"tool {name!r} occurs twice")
                names.add(name)
                part_names.add(name)
                tools.append({
                    "server": source,
                    "name": name,
                    "description": (spec.get("description") or "").strip(),
                    "input_schema": input_schema(spec.get("query_parameters")),
                })
            for i, sample in enumerate(read(stem + "-data.json")):
                expected = []
                for call in sample["output"]:
                    name = call.get("name")
                    if name == "var_result" or name in expected:
                        continue
                    if name not in part_names:
                        fail(f"{source} request {i} calls {name!r}, not in its catalogue")
                    expected.append(name)
                labels.append({
                    "query": " ".join(sample["input"].split()),
                    "expected": expected,
                    "split": "calibrate" if i % 2 == 0 else "heldout",
                    "source": source,
                })
    tools_text = json.dumps(tools, ensure_ascii=False, indent=1) + "\n"
    labels_text = "".join(json.dumps(l, ensure_ascii=False) + "\n" for l in labels)
    return tools_text, labels_text, len(tools), len(labels)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--wheel", help="a downloaded " + WHEEL + " (default: download it)")
    parser.add_argument("--out", default=FIXTURES, help="output directory (default tests/fixtures)")
    parser.add_argument("--check", action="store_true",
                        help="compare with the files in --out instead of writing them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        wheel = checked(args.wheel or download(tmp))
        tools_text, labels_text, n_tools, n_labels = convert(wheel)
    outputs = {TOOLS_FILE: tools_text, LABELS_FILE: labels_text}
    if args.check:
        stale = [n for n, text in outputs.items()
                 if not os.path.exists(os.path.join(args.out, n))
                 or open(os.path.join(args.out, n), encoding="utf-8").read() != text]
        if stale:
            fail("differs from the conversion: " + ", ".join(stale))
        print(f"fetch-nestful: {TOOLS_FILE} and {LABELS_FILE} match the conversion")
        return
    os.makedirs(args.out, exist_ok=True)
    for name, text in outputs.items():
        with open(os.path.join(args.out, name), "w", encoding="utf-8") as f:
            f.write(text)
    print(f"fetch-nestful: {n_tools} tools, {n_labels} labelled requests -> {args.out}")


if __name__ == "__main__":
    main()
