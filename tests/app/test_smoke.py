"""The whole app renders, and slider changes reach the config every page reads."""

from tests.support.apptest import make_app, running


def test_app_renders_and_sliders_change_config():
    at = make_app().run()
    assert not at.exception
    at.sidebar.slider(key="w_N").set_value(5).run()
    assert not at.exception
    assert running(at).N == 5
    at.sidebar.select_slider(key="w_E").set_value(12).run()
    assert running(at).E == 12
    assert at.sidebar.select_slider(key="w_nhead").options == ["1", "2", "3", "4", "6", "12"]
    # The sidebar says plainly why those are the only choices.
    assert any("nhead ∈ {1, 2, 3, 4, 6, 12}" in c.value for c in at.sidebar.caption)
