"""The Configs page as a Solara component drawn from the session's state: rendered in Python
(``solara.render``), its list follows the state, a config added is selected, and its buttons act."""

from __future__ import annotations

import ipywidgets as w
import solara

from workbench.core.config import RewardConfig
from workbench.views.app.configs_page import ConfigsPage
from workbench.views.app.options import AppOptions
from workbench.views.app.session import AppSession

WOOD = RewardConfig(strategy="per_achievement", weights={"collect_wood": 2.5})


def _button(rc, text: str) -> w.Button:
    return rc.find(w.Button, description=text).widget


def _html(rc, marker: str) -> w.HTML:
    (found,) = [html for html in rc.find(w.HTML).widgets if marker in html.value]
    return found


def test_the_list_follows_the_state_and_its_buttons_keep_configs(tmp_path):
    session = AppSession(AppOptions(corpus=None, workspace=tmp_path / "ws"))
    _, rc = solara.render(ConfigsPage(session), handle_error=False)
    configs = rc.find(w.Select, description="configs").widget
    assert list(configs.options) == ["per_achievement"] and configs.value == "per_achievement"
    session.add_config("wood", WOOD, "a test")  # a new state: listed and selected
    assert list(configs.options) == ["per_achievement", "wood"] and configs.value == "wood"
    assert "collect_wood 2.5" in _html(rc, "wb-app-config").value
    name = rc.find(w.Text, description="name").widget
    assert name.value == "wood"
    configs.value = "per_achievement"  # the user's choice: the name box follows it
    assert name.value == "per_achievement"
    configs.value = "wood"
    name.value = "wood heavy"
    _button(rc, "Save in workspace").click()
    assert (tmp_path / "ws" / "wood_heavy.yaml").is_file()
    assert RewardConfig.from_file(tmp_path / "ws" / "wood_heavy.yaml") == WOOD
    assert configs.value == "wood_heavy" and "wood_heavy" in session.configs  # kept under the file's name
    status = _html(rc, "wb-app-msg")
    assert "saved" in status.value
    name.value = "wood heavy"
    _button(rc, "Save in workspace").click()  # kept already, "replace" not ticked
    assert "tick &#x27;replace if it exists&#x27;" in status.value or "tick 'replace if it exists'" in status.value
    rc.find(w.Checkbox, description="replace if it exists").widget.value = True
    _button(rc, "Save in workspace").click()
    assert "saved" in status.value and not rc.find(w.Checkbox, description="replace if it exists").widget.value
    rc.find(w.Text, description="file").widget.value = str(tmp_path / "nope.yaml")
    _button(rc, "Open").click()
    assert "nope.yaml" in status.value and "wb-app-error" in status.value
    rc.close()


def test_two_tabs_saving_one_kept_config_the_second_is_told_and_the_first_save_stays(tmp_path):
    from workbench.views.app.workspace import Workspace

    Workspace(tmp_path / "ws").save("shared", RewardConfig(strategy="per_achievement", weights={"collect_wood": 1.0}))
    tab_a, tab_b = (AppSession(AppOptions(corpus=None, workspace=tmp_path / "ws")) for _ in range(2))
    (_, rc_a), (_, rc_b) = (
        solara.render(ConfigsPage(tab_a), handle_error=False),
        solara.render(ConfigsPage(tab_b), handle_error=False),
    )
    tab_a.add_config("wood4", RewardConfig(strategy="per_achievement", weights={"collect_wood": 4.0}), "tuned in A")
    tab_b.add_config("wood2", RewardConfig(strategy="per_achievement", weights={"collect_wood": 2.0}), "tuned in B")
    for rc in (rc_a, rc_b):  # each tab saves its own config as "shared", replacing the kept one
        rc.find(w.Text, description="name").widget.value = "shared"
        rc.find(w.Checkbox, description="replace if it exists").widget.value = True
    _button(rc_a, "Save in workspace").click()
    assert "saved" in _html(rc_a, "wb-app-msg").value
    _button(rc_b, "Save in workspace").click()  # B loaded 1, A saved 4 since: B is told, A's save stays
    message = _html(rc_b, "wb-app-msg").value
    assert "shared.yaml: changed since this tab loaded it" in message and "wb-app-error" in message
    assert RewardConfig.from_file(tmp_path / "ws" / "shared.yaml").weights["collect_wood"] == 4.0
    _button(rc_b, "Save in workspace").click()  # asked again: B replaces it, knowingly
    assert RewardConfig.from_file(tmp_path / "ws" / "shared.yaml").weights["collect_wood"] == 2.0
    rc_a.close()
    rc_b.close()
