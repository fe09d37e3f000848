"""``use_held``: a button made in one render reads what its controls hold now, not that render's values."""

from __future__ import annotations

import solara

from workbench.views.app.common import use_held


def test_a_button_made_before_the_typing_rendered_acts_on_the_typed_text():
    clicked: list[str] = []
    made: dict = {}

    @solara.component
    def Box():
        text, set_text = solara.use_state("old")
        held, holding = use_held(text=text)
        made.setdefault("holding", holding)
        made.setdefault("save", lambda: clicked.append(held["text"]))  # the first render's button
        made["shown"] = text
        return solara.Text(text)

    solara.render(Box(), handle_error=False)
    # The value arrives, then the click made by the first render: the held text is the new one
    # whether or not the render the typing asked for has run yet.
    made["holding"]("text", lambda value: None)("new")  # the value recorded, no render asked for
    made["save"]()
    assert clicked == ["new"]
    assert made["shown"] == "old"  # no render happened in between: the button still saw "new"
