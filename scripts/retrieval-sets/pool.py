#!/usr/bin/env python3
"""Builds the pooled catalogue check: retrieval-149's requests against a catalogue 2.8x larger.

    python3 scripts/retrieval-sets/pool.py [OUT_DIR]       # default target/pool

Writes, from the committed fixtures only (python3 standard library):

- `pooled-tools.json`: the 149 real tools, NESTFUL's 173 and the synthetic catalogue's 100
  minus `gdrive_download_file`, which the real corpus also has (421 tools);
- `heldout.jsonl`: retrieval-149's held-out half with its labels, minus the unanswerable
  requests that a pooled tool answers (listed below; 97 requests: 75 answerable, 22 not);
- `irrelevant-calibrate.jsonl`: the calibrate half's unanswerable requests that stay
  unanswerable in the pool (22), for `chef search --calibrate`.

The requests that the pool makes answerable were judged by reading the added tools' names
and descriptions (a tool that performs the request as asked), not by a ranker's score. The
pool is a stress check of how the defaults hold when a catalogue grows with tools written
by others: it is not a benchmark, the answerable requests keep their retrieval-149 labels
even where a pooled tool might also serve them (which can only understate recall).
"""

import json
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
FIXTURES = os.path.join(ROOT, "tests", "fixtures")

# Unanswerable in retrieval-149, answerable once the pooled tools are in the catalogue.
NOW_ANSWERABLE = {
    # calibrate half
    "book me a flight to Lisbon next Friday",
    "translate this paragraph into Japanese",
    "play some jazz on the kitchen speaker",
    "post a message in the #general Slack channel",
    "convert 100 US dollars to euros",
    "create a Jira ticket for the login bug",
    "schedule a Zoom meeting with the design team",
    "buy two tickets for the concert on Saturday",
    # held-out half
    "what's the weather going to be in Chicago tomorrow",
    "create a calendar event for the Monday standup",
    "open a pull request on GitHub for my branch",
    "send an SMS to my landlord",
    "book a hotel room in Paris for two nights",
    "generate a QR code for our wifi password",
    "find a recipe for vegan lasagna",
    "record a voice memo",
}


def load(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        return json.load(f)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "pool")
    os.makedirs(out, exist_ok=True)
    real, nestful = load("real-mcp-tools.json"), load("nestful-tools.json")
    taken = {t["name"] for t in real + nestful}
    synthetic = [t for t in load("synthetic-100-tools.json") if t["name"] not in taken]
    pooled = real + nestful + synthetic
    with open(os.path.join(out, "pooled-tools.json"), "w", encoding="utf-8") as f:
        json.dump(pooled, f)
    heldout, irrelevant = [], []
    with open(os.path.join(FIXTURES, "retrieval-149.jsonl"), encoding="utf-8") as f:
        for line in f:
            request = json.loads(line)
            kept = request["expected"] or request["query"] not in NOW_ANSWERABLE
            if request["split"] == "heldout" and kept:
                heldout.append(line.rstrip("\n"))
            elif request["split"] != "heldout" and kept and not request["expected"]:
                irrelevant.append(json.dumps({"query": request["query"]}))
    for name, lines in (("heldout.jsonl", heldout), ("irrelevant-calibrate.jsonl", irrelevant)):
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))
    print(f"{out}: {len(pooled)} tools, {len(heldout)} held-out requests, "
          f"{len(irrelevant)} irrelevant for calibration")


if __name__ == "__main__":
    main()
