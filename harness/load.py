"""K concurrent Chromium sessions against one `streamlit run`, on loopback only.

Starts the app as a learner would (harness.server), measures the cold start (process start to the
table visible in Chromium), then runs K browser sessions side by side for a bounded time. Each
session, in a loop:

  - opens the Explorer with its own N in the URL and checks its table shows that N;
  - moves the M slider with the keyboard and times the rerun (key press to the new shape);
  - answers quiz questions wrongly on purpose and checks the score counts exactly its own answers;
  - starts a short training run in the Training lab and waits for its result (or the busy notice).

It samples the server's resident memory (VmRSS) throughout. ``run_load`` returns the figures and
findings as a dict, which tests/load checks. Every wait has a
timeout and the run has a deadline, so it stops by itself.
"""

from __future__ import annotations

import asyncio
import os
import re
import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.server import CHROMIUM, CHROMIUM_ARGS, free_port, goto_when_listening, start_server, stop_server

WAIT_MS = 60_000  # any single wait; a session that exceeds it records an error and goes on
TRAIN_WAIT_MS = 120_000
M_VALUES = list(range(1, 65))  # the M slider's first options, one by one (ui/link/config.py LENGTHS)


def rss_bytes(pid: int) -> int | None:
    """Resident memory of one process, from /proc (Linux)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


class MemorySampler(threading.Thread):
    """Reads the server's VmRSS every ``every`` seconds until stopped."""

    def __init__(self, pid: int, every: float = 0.5):
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.samples: list[tuple[float, int]] = []
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            value = rss_bytes(self.pid)
            if value is not None:
                self.samples.append((time.monotonic(), value))
            self._halt.wait(self.every)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=5)


@dataclass
class SessionLog:
    index: int
    N: int
    reruns: list[float] = field(default_factory=list)  # seconds, key press to new table
    trainings: int = 0
    busy: int = 0
    answered_ids: set[str] = field(default_factory=set)
    loops: int = 0
    errors: list[str] = field(default_factory=list)  # exceptions and error boxes the app showed
    leaks: list[str] = field(default_factory=list)  # this session saw a config or score not its own
    timeouts: list[str] = field(default_factory=list)  # this script's own waits that ran out


def shape_cell(page, row: int):
    """The explorer table's live shape (column 2) of a row (0-based)."""
    return page.locator('[data-testid="stDataFrame"]').first.locator(f'[data-testid="glide-cell-2-{row}"]')


async def count_errors(page, where: str, log: SessionLog) -> None:
    """Uncaught exceptions and st.error boxes on the page (a quiz's "Not quite" verdict is no error)."""
    exceptions = page.locator('[data-testid="stException"]')
    errors = page.locator('[data-testid="stAlertContentError"]').filter(has_not_text="Not quite.")
    for found, kind in ((exceptions, "exception"), (errors, "error")):
        n = await found.count()
        if n:
            text = (await found.first.inner_text())[:200]
            log.errors.append(f"{where}: {n} {kind}(s): {text}")


async def goto_page(page, name: str) -> None:
    await page.locator(".st-key-page_nav a").filter(has_text=re.compile(re.escape(name) + "$")).click()
    await page.locator("h1").filter(has_text=name if name != "Explorer" else "Shape Explorer").first.wait_for(
        timeout=WAIT_MS)


async def explorer_step(page, log: SessionLog, moves: int) -> None:
    from playwright.async_api import expect

    await goto_page(page, "Explorer")
    first = shape_cell(page, 0)
    await expect(first).to_have_text(re.compile(r"\(\d+, \d+\)"), timeout=WAIT_MS)
    text = await first.inner_text()
    n_seen, m_now = (int(v) for v in re.findall(r"\d+", text))
    if n_seen != log.N:
        log.leaks.append(f"explorer showed N={n_seen}, this session set N={log.N}")
    thumb = page.locator('[data-testid="stSlider"]').filter(has_text="M — source length").get_by_role("slider")
    for i in range(moves):
        key, step = ("ArrowRight", 1) if (i % 2 == 0 and m_now < 64) or m_now <= 1 else ("ArrowLeft", -1)
        target = M_VALUES[M_VALUES.index(m_now) + step]
        await thumb.focus()
        start = time.perf_counter()
        await thumb.press(key)
        try:
            await expect(first).to_have_text(f"({log.N}, {target})", timeout=WAIT_MS)
            log.reruns.append(time.perf_counter() - start)
            m_now = target
        except AssertionError:
            log.timeouts.append(f"explorer: table did not show ({log.N}, {target}) after {key}; it shows "
                              f"{await first.inner_text()} and the URL is {page.url}")
            return
    await count_errors(page, "explorer", log)


async def wait_until_run_done(page) -> None:
    """Wait until the app is not running a script for this page (its status widget is gone)."""
    try:
        await page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=WAIT_MS)
    except Exception:  # noqa: BLE001 - still running after the wait: go on and let later checks tell
        pass


async def current_question(page) -> str | None:
    """The id of the question on screen, read off its submit button's key."""
    holder = page.locator('[class*="st-key-submit_"]').first
    if not await holder.count():
        return None
    found = re.search(r"st-key-submit_(\S+)", await holder.get_attribute("class") or "")
    return found.group(1) if found else None


async def quiz_step(page, log: SessionLog, answers: int) -> None:
    """Answer new text questions wrongly; the score must count exactly this session's answers.

    The score counts each question's latest answer, so a question answered before is skipped.
    """
    from playwright.async_api import expect

    await goto_page(page, "Quiz")
    score = page.get_by_text(re.compile(r"^Score:"))
    position = page.get_by_text(re.compile(r"^Question \d+ of \d+$"))
    for _ in range(answers):
        # A readable answer that is never right ("(0)" for a shape, "-7" for a number), found by the
        # question's id because a rerun may still be replacing the old question.
        for _ in range(40):
            await wait_until_run_done(page)
            qid = await current_question(page)
            if qid is not None and qid not in log.answered_ids:
                box = page.locator(f'.st-key-ans_{qid} input[type="text"]')
                if await box.count():
                    try:
                        shape = (await box.get_attribute("placeholder") or "").startswith("e.g.")
                        await box.fill("(0)" if shape else "-7", timeout=10_000)
                        await box.press("Enter", timeout=10_000)
                        break
                    except Exception:  # noqa: BLE001 - replaced while typing: look again
                        continue
            before = await position.inner_text()
            await page.locator(".st-key-quiz_next button").click()
            await expect(position).not_to_have_text(before, timeout=WAIT_MS)
        else:
            log.timeouts.append("quiz: no new text question within 40")
            return
        await page.locator(f".st-key-submit_{qid} button").click()
        log.answered_ids.add(qid)
        wanted = f"0 right, {len(log.answered_ids)} wrong"
        try:
            await expect(score).to_contain_text(wanted, timeout=WAIT_MS)
        except AssertionError:
            seen = await score.inner_text() if await score.count() else "(no score line)"
            log.leaks.append(f"quiz: expected {wanted}; saw {seen!r}")
            return
    await count_errors(page, "quiz", log)


async def training_step(page, log: SessionLog) -> None:
    await goto_page(page, "Training lab")
    steps = page.locator('[data-testid="stSlider"]').filter(has_text="steps").first.get_by_role("slider")
    await steps.focus()
    await steps.press("Home")  # the fewest steps: a short run
    await page.wait_for_timeout(300)
    await page.locator(".st-key-tl_rev_run button").click()
    done = page.get_by_text("first half (x) accuracy")
    busy = page.get_by_text("already running on this server")
    deadline = time.monotonic() + TRAIN_WAIT_MS / 1000
    while time.monotonic() < deadline:
        if await done.count():
            log.trainings += 1
            break
        if await busy.count():
            log.busy += 1
            break
        await page.wait_for_timeout(250)
    else:
        log.timeouts.append("training: no result or busy notice in time")
    await count_errors(page, "training lab", log)


async def session(browser, url: str, index: int, deadline: float, moves: int, answers: int,
                  ramp: float) -> SessionLog:
    log = SessionLog(index=index, N=index % 64 + 1)
    await asyncio.sleep(index * ramp)  # visitors arrive one after another, not all in one instant
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    page.set_default_timeout(WAIT_MS)
    try:
        try:
            await page.goto(f"{url}/?N={log.N}", timeout=WAIT_MS)
        except Exception as exc:  # noqa: BLE001 - a page that never loads is a finding, not a crash
            log.timeouts.append(f"first load: {type(exc).__name__}")
            return log
        while log.loops == 0 or time.monotonic() < deadline:  # every session does one whole loop
            for step in (lambda: explorer_step(page, log, moves), lambda: quiz_step(page, log, answers),
                         lambda: training_step(page, log)):
                if log.loops and time.monotonic() >= deadline:
                    break
                try:
                    await step()
                except Exception as exc:  # noqa: BLE001 - record and go on: one failure is a finding
                    log.timeouts.append(f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
            log.loops += 1
    finally:
        await context.close()
    return log


async def cold_start(browser, url: str, started: float) -> float:
    """Seconds from the server process's start to the Explorer's first table row in Chromium."""
    from playwright.async_api import expect

    context = await browser.new_context()
    page = await context.new_page()
    try:
        await goto_when_listening(page, url, started, limit_s=120)
        await expect(shape_cell(page, 0)).to_have_text(re.compile(r"\(\d+, \d+\)"), timeout=120_000)
        return time.monotonic() - started
    finally:
        await context.close()


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def run_load(sessions: int, seconds: float, moves: int, answers: int, ramp: float = 0.5) -> dict:
    """Run the load; every browser wait is allowed longer with more sessions sharing the CPUs."""
    from playwright.async_api import async_playwright

    global WAIT_MS
    WAIT_MS = int(60_000 * max(1.0, sessions / 8))

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"load-streamlit-{port}.log"
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        started = time.monotonic()
        proc = start_server(port, log_path)
        sampler = MemorySampler(proc.pid)
        sampler.start()
        try:
            cold = await cold_start(browser, url, started)
            rest = rss_bytes(proc.pid) or 0
            t0 = time.monotonic()
            deadline = t0 + seconds
            logs = await asyncio.gather(*(session(browser, url, i, deadline, moves, answers, ramp)
                                          for i in range(sessions)))
            t1 = time.monotonic()
        finally:
            sampler.stop()
            stop_server(proc)
            await browser.close()
    during = [(t, v) for t, v in sampler.samples if t0 <= t <= t1]
    third = (t1 - t0) / 3
    first = [v for t, v in during if t < t0 + third]
    last = [v for t, v in during if t >= t1 - third]
    reruns = [r for log in logs for r in log.reruns]
    mib = 2**20
    return {
        "sessions": sessions,
        "seconds": round(t1 - t0, 1),
        "cold_start_seconds": round(cold, 2),
        "rerun_count": len(reruns),
        "rerun_p50_ms": round(percentile(reruns, 0.5) * 1e3, 1) if reruns else None,
        "rerun_p95_ms": round(percentile(reruns, 0.95) * 1e3, 1) if reruns else None,
        "rss_at_rest_mib": round(rest / mib, 1),
        "rss_peak_mib": round(max(v for _, v in during) / mib, 1) if during else None,
        "rss_median_first_third_mib": round(statistics.median(first) / mib, 1) if first else None,
        "rss_median_last_third_mib": round(statistics.median(last) / mib, 1) if last else None,
        "rss_peak_first_third_mib": round(max(first) / mib, 1) if first else None,
        "rss_peak_last_third_mib": round(max(last) / mib, 1) if last else None,
        "loops": sum(log.loops for log in logs),
        "quiz_answers": sum(len(log.answered_ids) for log in logs),
        "trainings_finished": sum(log.trainings for log in logs),
        "trainings_turned_away_busy": sum(log.busy for log in logs),
        "errors": [f"session {log.index}: {e}" for log in logs for e in log.errors],
        "leaks": [f"session {log.index}: {e}" for log in logs for e in log.leaks],
        "timeouts": [f"session {log.index}: {e}" for log in logs for e in log.timeouts],
    }


def report(result: dict) -> str:
    lines = [
        f"{result['sessions']} concurrent sessions for {result['seconds']} s "
        f"({result['loops']} loops, {result['rerun_count']} slider reruns, {result['quiz_answers']} quiz answers, "
        f"{result['trainings_finished']} trainings finished, {result['trainings_turned_away_busy']} turned away busy)",
        f"cold start (process start to table visible): {result['cold_start_seconds']} s",
        f"rerun latency, key press to new table: p50 {result['rerun_p50_ms']} ms, p95 {result['rerun_p95_ms']} ms",
        f"server RSS: at rest {result['rss_at_rest_mib']} MiB, peak {result['rss_peak_mib']} MiB; "
        f"median first third {result['rss_median_first_third_mib']} MiB, last third "
        f"{result['rss_median_last_third_mib']} MiB (peaks {result['rss_peak_first_third_mib']} / "
        f"{result['rss_peak_last_third_mib']} MiB)",
        f"errors shown: {len(result['errors'])}; sessions that saw another's state: {len(result['leaks'])}; "
        f"waits of this script that ran out: {len(result['timeouts'])}",
    ]
    lines += [f"  error: {e}" for e in result["errors"][:20]]
    lines += [f"  leak: {e}" for e in result["leaks"][:20]]
    lines += [f"  timeout: {e}" for e in result["timeouts"][:20]]
    return "\n".join(lines)
