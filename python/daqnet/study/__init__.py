"""Design studies (``daqnet study``): grids of ``daqnet simulate`` runs over one scenario,
as one tidy table (study.csv, study.json) with figures.

``mapping``: on a PERCS or dragonfly scenario, every job mapping with direct and indirect
routing, for the 2-D and 4-D stencils (2 MB messages) and a 14-target multicast (1 MB) —
the grid of Bhatele et al. (SC'11). ``taper``: on a fat-tree scenario, full and tapered
trees for the same hosts, with a stencil in locality-preserving order, random bisections
and an all-to-all: the slowdown against the full tree, the load per stage, and the switches
and cables saved (from the planner).
"""

from __future__ import annotations

from .result import StudyResult
from .run import mapping_study, taper_study

__all__ = ["StudyResult", "mapping_study", "taper_study"]
