"""What a diagnosis flags: one ``Flag`` per problem found, each saying why in words."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

__all__ = ["FLAG_COLUMNS", "Flag", "flags_table"]

#: Columns of ``Diagnosis.flags``, in order.
FLAG_COLUMNS = ("section", "code", "subject", "why")


@dataclass(frozen=True)
class Flag:
    """One problem a diagnosis found.

    Attributes:
        section: The section that found it (farming, dominance, dead entries, alignment).
        code: A stable code (for scripts and tests).
        subject: What it is about (an episode, a policy, a config key).
        why: A sentence with the numbers behind it.
        evidence: What a flag about one episode saw there (the loop, its decisions, its pay and a
            replay link: ``loops.evidence``), or None.
    """

    section: str
    code: str
    subject: str
    why: str
    evidence: dict[str, Any] | None = field(default=None, compare=False, hash=False)

    def __str__(self) -> str:
        return f"[{self.section}] {self.code} {self.subject}: {self.why}"


def flags_table(flags: Iterable[Flag]) -> pd.DataFrame:
    """The flags as a tidy table, one row each, columns ``FLAG_COLUMNS``."""
    rows = [(f.section, f.code, f.subject, f.why) for f in flags]
    return pd.DataFrame(rows, columns=list(FLAG_COLUMNS), dtype=object)
