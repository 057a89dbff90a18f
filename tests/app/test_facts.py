"""Facts the pages' charts state in words, checked against the charts themselves."""

import json

from core import DEFAULT
from core.trace import trace


def _scales(node) -> list[dict]:
    """Every scale an encoding of the spec sets."""
    if isinstance(node, dict):
        found = [node["scale"]] if isinstance(node.get("scale"), dict) else []
        return found + [s for v in node.values() for s in _scales(v)]
    if isinstance(node, list):
        return [s for v in node for s in _scales(v)]
    return []


def test_the_parameter_chart_is_described_with_the_scale_it_draws():
    """Its bars are drawn on a linear axis; the sentence a screen reader hears said 'on a log scale'."""
    from pages.tables import params_spec

    spec = params_spec(trace(DEFAULT))
    log = any(s.get("type") == "log" for s in _scales(spec))
    assert ("log scale" in spec["description"]) is log
    assert ("linear scale" in spec["description"]) is not log
    assert json.dumps(spec)  # still plain JSON for Vega
