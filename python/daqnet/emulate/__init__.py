"""``daqnet emulate``: the scenario's fabric built from network namespaces on one machine,
the real event builder measured over it, and the protocol simulation beside it.

:mod:`.topology` decides what to build (pure data, from the fabric and its routing tables);
:mod:`.netns` creates and removes it (iproute2, with a state file for ``--cleanup``);
:mod:`.run` runs daqnet bench in it and compares. See docs/emulate.md.
"""

from __future__ import annotations

from .run import emulate, paths_match, short_window
from .topology import MAX_HOSTS, Topology, plan

__all__ = ["MAX_HOSTS", "Topology", "emulate", "paths_match", "plan", "short_window"]
