"""What the cluster tests share: which replica served a browser, and a quiz answered the way a learner
would, through whatever replica the balancer picked."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.support.browser import LOAD, idle

AFFINITY_COOKIE = "SERVERID"  # deploy/haproxy.cfg: `cookie SERVERID insert indirect nocache`


def replica_of(context) -> str | None:
    """The replica this browser context is bound to: the balancer's affinity cookie."""
    return next((c["value"] for c in context.cookies() if c["name"] == AFFINITY_COOKIE), None)


def served_by(page) -> list[str]:
    """Every replica named by a response's X-Replica header from now on, in order, kept in the list
    returned (the balancer sets the header on every response it forwards)."""
    seen: list[str] = []

    def note(response) -> None:
        name = response.headers.get("x-replica")
        if name:
            seen.append(name)

    page.on("response", note)
    return seen


def current_question(page) -> str | None:
    """The id of the question on screen, read off its submit button's key."""
    holder = page.locator('[class*="st-key-submit_"]').first
    if not holder.count():
        return None
    found = re.search(r"st-key-submit_(\S+)", holder.get_attribute("class") or "")
    return found.group(1) if found else None


def answer_wrongly(page, answered: set[str]) -> str:
    """Move to a text question not in ``answered``, give it an answer that is never right ("(0)" for a
    shape, "-7" for a number), submit it; return its id. The score then counts one more wrong."""
    position = page.get_by_text(re.compile(r"^Question \d+ of \d+$"))
    for _ in range(40):
        idle(page)
        qid = current_question(page)
        if qid is not None and qid not in answered:
            box = page.locator(f'.st-key-ans_{qid} input[type="text"]')
            if box.count():
                shape = (box.get_attribute("placeholder") or "").startswith("e.g.")
                box.fill("(0)" if shape else "-7")
                box.press("Enter")
                idle(page)
                page.locator(f".st-key-submit_{qid} button").click()
                idle(page)
                return qid
        before = position.inner_text()
        page.locator(".st-key-quiz_next button").click()
        expect(position).not_to_have_text(before, timeout=LOAD)
    raise AssertionError("no new text question within 40")


def score_line(page):
    return page.get_by_text(re.compile(r"^Score:"))
