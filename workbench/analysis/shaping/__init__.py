"""The shaping certificate: how far a config's shaping is from potential-based (Ng, Harada and Russell 1999).

``certify(corpus, config)`` fits, per reward component, the linear potential over Crafter's
state (inventory, vitals included, and unlocked achievements) whose ``gamma Phi(s') - Phi(s)``
best explains it on the logged transitions (``workbench.analysis.shaping.fit``), finds the
loops in the data that return to a state having paid something (``...shaping.cycles``), and
pays the corpus with the config's potential-based counterpart (``workbench.scoring.potential``,
which ``workbench.env.CrafterStepwiseEnv(shaping="potential")`` pays live).
"""

from workbench.analysis.shaping.certificate import Certificate, certify, component_events
from workbench.analysis.shaping.cycles import positive_cycles, previous_visits, segment_or
from workbench.analysis.shaping.fit import Moments, PotentialFit, fit_potential, moments, shaping_design, solve

__all__ = [
    "Certificate",
    "Moments",
    "PotentialFit",
    "certify",
    "component_events",
    "fit_potential",
    "moments",
    "positive_cycles",
    "previous_visits",
    "segment_or",
    "shaping_design",
    "solve",
]
