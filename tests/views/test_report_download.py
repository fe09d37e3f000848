"""The dashboard's report download without a browser: the link carries the page itself, names are
escaped, and a page with nothing to report says why."""

from __future__ import annotations

import base64
import re
from types import SimpleNamespace

import pytest
from helpers.report_inputs import configs

from workbench.data.episodes import Corpus
from workbench.errors import WorkbenchError
from workbench.views.app.report_download import compare_report, download_link, live_report


def test_the_link_carries_the_page_and_escapes_its_name() -> None:
    document = "<!DOCTYPE html><title>é</title>".encode()
    link = download_link(document, 'a"b<c>.html')
    href = re.search(r'href="data:text/html;base64,([^"]+)"', link).group(1)
    assert base64.b64decode(href) == document
    assert 'download="a&quot;b&lt;c&gt;.html"' in link


def test_nothing_to_report_is_said_not_built() -> None:
    no_corpus = SimpleNamespace(corpus=None, configs=configs(), corpus_label="")
    with pytest.raises(WorkbenchError, match="open one on the Corpus page"):
        compare_report(no_corpus)
    with pytest.raises(WorkbenchError, match="follow a source first"):
        live_report(no_corpus, lambda: None)
    with pytest.raises(WorkbenchError, match="follow a source first"):
        live_report(no_corpus, lambda: Corpus())
