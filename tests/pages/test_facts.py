"""Facts the pages' charts state in words, checked against the charts themselves."""

from tests.support.apptest import running
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
    from render.tables import params_spec

    spec = params_spec(trace(DEFAULT))
    log = any(s.get("type") == "log" for s in _scales(spec))
    assert ("log scale" in spec["description"]) is log
    assert ("linear scale" in spec["description"]) is not log
    assert json.dumps(spec)  # still plain JSON for Vega


def test_the_meta_table_note_names_what_makes_the_pass_large():
    """At M=512 the default's pass holds about 49 MiB, nearly all activations, with 20,260 parameters
    (79 KiB): the note said the *model* was large 'by its parameters'. It gives the bytes instead."""
    from core import human_bytes
    from tests.support.apptest import make_app

    at = make_app({"M": "512"}).run()  # M_target follows M
    assert not at.exception, at.exception
    t = trace(running(at))
    notes = [i.value for i in at.info if "meta device" in i.value]
    assert len(notes) == 1, [i.value for i in at.info]
    assert f"about {human_bytes(t.estimate.total)} (weights and activations)" in notes[0]
    assert "parameters)" not in notes[0]


def test_the_slim_pass_refusal_names_the_sizes_each_part_grows_with():
    """The attention page's advice when not even a slim pass fits names its largest part and the sliders
    that shrink it. (Its advice used to be about the whole pass: at GPT-2's sizes it said to lower N and
    layers, which leave a slim pass as big as it was.) Each part must grow with every size it names, and
    with no other."""
    from core import TransformerConfig
    from core.slim import slim_estimate
    from ui.compute.traces import _SLIM_PARTS

    base = TransformerConfig(N=2, M=8, M_target=6, E=16, nhead=2, vocab_size=100, layers=2, d_ff=40, max_len=16)
    sizes = ("N", "M", "M_target", "E", "nhead", "d_ff", "layers", "vocab_size")
    for part, (_, named) in _SLIM_PARTS.items():
        names = set(named.replace(" and ", ", ").split(", "))
        assert names <= set(sizes), names
        for size in sizes:
            grown = getattr(slim_estimate(base.replace(**{size: 2 * getattr(base, size)})), part)
            assert (grown > getattr(slim_estimate(base), part)) is (size in names), (part, size)


def test_the_pass_metric_says_where_the_table_goes_shape_only():
    """Its help said the table is read off a shape-only pass over the 256 MiB budget; the table goes
    shape-only over 32 MiB (ui.compute.traces.LIVE_TABLE_BYTES). At M=512 the default's pass holds about
    49 MiB: the table is shape-only, well under the budget."""
    from core import human_bytes
    from ui.compute.traces import LIVE_TABLE_BYTES
    from tests.support.apptest import make_app

    at = make_app({"M": "512"}).run()
    assert not at.exception, at.exception
    t = trace(running(at))
    assert LIVE_TABLE_BYTES < t.estimate.total < t.budget_bytes
    metric = {m.label: m for m in at.metric}["a real pass would hold"]  # the table's pass was shape-only
    assert f"Over {human_bytes(LIVE_TABLE_BYTES)} the table is read off a shape-only pass" in metric.proto.help
