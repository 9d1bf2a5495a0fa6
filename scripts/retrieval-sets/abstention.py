#!/usr/bin/env python3
"""What a bi-encoder's cosine can tell about "nothing fits", across catalogues (issue 44).

    cargo run --release -p chef-devtools --bin abstention_dump -- target/scores.jsonl
    python3 scripts/retrieval-sets/abstention.py target/scores.jsonl

Reads the lines `abstention_dump` writes (every request's cosine with every tool of its
catalogue, the lexical index's verdict, the shipped hybrid's verdict and best ten) and
prints, per set, split and form:

- the quantiles (5%, 25%, 50%, 75%, 95%) of the best cosine for answerable and
  unanswerable requests;
- a threshold rule "abstain when the best cosine is below t" (alone, and joint with the
  lexical index's own rule, as the shipped hybrid does), with t picked on retrieval-149's
  calibrate half only (the lowest t that refuses 90% of its unanswerable requests), then
  its false and true abstention and recall@5 (the hybrid's ranking, abstention applied)
  on every other set.

Standard library only; deterministic. NESTFUL has no unanswerable request.
"""

import json
import sys


def quantiles(values):
    values = sorted(values)
    if not values:
        return "-"
    pick = lambda q: values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))]
    return " ".join(f"{pick(q):.3f}" for q in (0.05, 0.25, 0.5, 0.75, 0.95))


def main(path):
    groups = {}
    for line in open(path, encoding="utf-8"):
        r = json.loads(line)
        best = max(r["cos"])
        top5 = any(h[0] in r["expected"] for h in r["hybrid"][:5])
        key = (r["set"], r["split"] or "-", r["form"])
        groups.setdefault(key, []).append(
            (bool(r["expected"]), best, r["lex_abstains"], r["hybrid_abstained"], top5)
        )
    print("best cosine, quantiles 5/25/50/75/95%:")
    for key in sorted(groups):
        rows = groups[key]
        ans = [b for a, b, *_ in rows if a]
        una = [b for a, b, *_ in rows if not a]
        print(f"  {'/'.join(key):30} answerable {quantiles(ans):35} unanswerable {quantiles(una)}")
    calibrate = groups.get(("r149", "calibrate", "natural"), [])
    for joint in (False, True):
        unanswerable = [(b, lex) for a, b, lex, *_ in calibrate if not a]
        t = None
        for candidate in sorted({b for b, _ in unanswerable}) + [9.0]:
            refused = sum(1 for b, lex in unanswerable if b < candidate and (lex or not joint))
            if refused >= 0.9 * len(unanswerable):
                t = candidate
                break
        print(f"\nabstain when the best cosine < {t:.4f}{' and the lexical rule abstains' if joint else ''}"
              " (picked on retrieval-149 calibrate):")
        print(f"  {'set':30} {'false abst.':>11} {'true abst.':>10} {'recall@5':>9} {'never':>6} {'shipped true':>12}")
        for key in sorted(groups):
            rows = groups[key]
            abst = lambda b, lex: b < t and (lex or not joint)
            ans = [r for r in rows if r[0]]
            una = [r for r in rows if not r[0]]
            false = sum(abst(b, lex) for _, b, lex, _, _ in ans) / len(ans) if ans else None
            true = sum(abst(b, lex) for _, b, lex, _, _ in una) / len(una) if una else None
            r5 = sum(top5 and not abst(b, lex) for _, b, lex, _, top5 in ans) / len(ans) if ans else None
            never = sum(top5 for *_, top5 in ans) / len(ans) if ans else None
            shipped = sum(h for _, _, _, h, _ in una) / len(una) if una else None
            cell = lambda x: "-" if x is None else f"{x:.3f}"
            print(f"  {'/'.join(key):30} {cell(false):>11} {cell(true):>10} {cell(r5):>9} {cell(never):>6} {cell(shipped):>12}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "target/scores.jsonl")
