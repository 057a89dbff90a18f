"""Load and soak: K concurrent Chromium sessions against one `streamlit run`, on loopback only.

It starts the app as a learner would (`streamlit run streamlit_app.py`, headless, 127.0.0.1 and a
free port), measures the cold start (process start to the table visible in Chromium), then runs K
browser sessions side by side for a bounded time. Each session, in a loop:

  - opens the Explorer with its own N in the URL and checks its table shows that N;
  - moves the M slider with the keyboard and times the rerun (key press to the new shape);
  - answers quiz questions wrongly on purpose and checks the score counts exactly its own answers;
  - starts a short training run in the Training lab and waits for its result (or the busy notice).

It samples the server's resident memory (VmRSS) throughout, and reports errors shown on any page,
rerun latency p50/p95, memory at rest, peak and growth between the first and last thirds of the run,
and any session that saw another's config or score. It stops by itself: every wait has a timeout
and the run has a deadline (after which each session finishes at most its first loop).

    python bench/load.py                      # K=8 for 60 s
    python bench/load.py --sessions 32 --seconds 60
    python bench/load.py --seconds 300        # the 5-minute soak
    python bench/load.py --json               # one JSON object instead of the report
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # a script: the repo root holds harness/

from harness.load import report, run_load  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", "-k", type=int, default=8, help="concurrent browser sessions (1-64)")
    parser.add_argument("--seconds", type=float, default=60, help="how long the sessions keep going")
    parser.add_argument("--moves", type=int, default=4, help="slider moves per explorer visit")
    parser.add_argument("--answers", type=int, default=1, help="quiz answers per quiz visit")
    parser.add_argument("--ramp", type=float, default=0.5, help="seconds between two sessions' arrivals")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not 1 <= args.sessions <= 64 or not 1 <= args.seconds <= 3600:
        parser.error("--sessions must be 1-64 and --seconds 1-3600")
    result = asyncio.run(run_load(args.sessions, args.seconds, args.moves, args.answers, args.ramp))
    print(json.dumps(result, indent=2) if args.json else report(result))
    return 1 if result["errors"] or result["leaks"] else 0


if __name__ == "__main__":
    sys.exit(main())
