"""Kept config names in any script ("дерево", "木の報酬") are accepted and read back under their
own name; separators and dot-names still never leave the workspace or hide a file."""

from __future__ import annotations

import unicodedata

import pytest

from workbench.core.config import RewardConfig
from workbench.views.app.workspace import Workspace, WorkspaceError, file_stem

CONFIG = RewardConfig(strategy="consistent")


@pytest.mark.parametrize("name", ["дерево", "木の報酬", "δέντρο-2", "١٢٣"])
def test_a_name_of_letters_or_digits_in_any_script_is_kept_under_itself(tmp_path, name) -> None:
    assert file_stem(name) == name
    space = Workspace(tmp_path / "ws")
    path = space.save(name, CONFIG)
    assert path.parent == space.folder and path.name == f"{name}.yaml"
    configs, problems = space.configs()
    assert list(configs) == [name] and not problems


def test_unicode_names_keep_separators_and_dot_names_out(tmp_path) -> None:
    assert file_stem("../дерево/..") == "дерево"
    assert file_stem("木\\の/報酬") == "木_の_報酬"
    assert file_stem(".скрытый") == "скрытый"
    for bad in ("..", "/", "・・", "\u3000"):  # no letter or digit in any script
        with pytest.raises(WorkspaceError):
            file_stem(bad)


def test_one_name_in_two_unicode_spellings_is_one_file(tmp_path) -> None:
    composed, decomposed = "é", unicodedata.normalize("NFD", "é")
    assert composed != decomposed and file_stem(composed) == file_stem(decomposed)


def test_a_long_name_fits_a_file_name_in_bytes(tmp_path) -> None:
    stem = file_stem("木" * 300)  # 900 bytes of UTF-8
    assert len(f"{stem}.yaml".encode()) <= 255 and set(stem) == {"木"}
    assert Workspace(tmp_path / "ws").save("木" * 300, CONFIG).is_file()
