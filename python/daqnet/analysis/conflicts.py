"""Static conflict analysis: link loads and conflicts, step by step.

In every step each flow follows its route; the *load* of a directed link is the number of
flows on it and ``conflicts = Σ_links max(0, load − 1)``. Steps are numbered from 1 in
every report (step s of a barrel shift sends rank i to rank i + s).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _core
from ..errors import DaqnetError
from ..memory_budget import ANALYSIS_BYTES_PER_FLOW, check_step_memory
from ..placement import Placement
from ..routing import Routing
from ..threads import resolve_threads
from ..workload import Workload

__all__ = ["ConflictReport", "conflicts"]


class ConflictReport:
    """Result of :func:`conflicts`: per step, per link and per link class."""

    def __init__(
        self,
        routing: Routing,
        placement: Placement,
        workload: Workload,
        core: _core.analysis.ConflictResult,
        user_stop: bool,
    ):
        self.routing = routing
        self.fabric = routing.fabric
        self.placement = placement
        self.workload = workload
        self._core = core
        #: True when the run stopped early (Ctrl-C); the tables hold the steps done.
        self.interrupted = bool(core.interrupted or user_stop)
        self._steps = core.step_table()
        self._steps["step"] = self._steps["step"] + 1

    # -- totals ------------------------------------------------------------------------
    @property
    def total_flows(self) -> int:
        return self._core.total_flows

    @property
    def local_flows(self) -> int:
        """Of total_flows, those between ranks of one host: on no link of the fabric (a
        stencil's neighbours on one node), so in no load or conflict."""
        return int(self._core.local_flows)

    @property
    def total_conflicts(self) -> int:
        return self._core.total_conflicts

    @property
    def max_link_load(self) -> int:
        return self._core.max_link_load

    @property
    def steps_total(self) -> int:
        return self._core.steps_total

    @property
    def steps_done(self) -> int:
        return len(self._steps["step"])

    @property
    def steps_with_conflicts(self) -> int:
        return int(np.count_nonzero(self._steps["conflicts"]))

    @property
    def sum_max_link_load(self) -> int:
        """Σ over steps of the step's max link load: with equal flows, a step lasts as long as
        its most loaded link needs, so this over the steps done is the schedule's slowdown
        against a conflict-free fabric (where every step's max load is 1)."""
        return int(self._steps["max_link_load"].sum())

    @property
    def host_link_conflicts(self) -> int:
        """The conflicts on links to or from a host: flows that share a host's own link,
        which no routing avoids (for the ranks placed there)."""
        lt = self.fabric.links()
        host = (lt["src"] < self.fabric.num_hosts) | (lt["dst"] < self.fabric.num_hosts)
        return int(self._core.link_table()["conflicts"][host].sum())

    @property
    def sum_max_host_link_load(self) -> int:
        """Σ over steps of the most flows on one host's own link: what the hosts send or
        receive at once bounds a step whatever the fabric (with one rank per host, 1 per
        step for a permutation, as a barrel shift's; N − 1 for all pairs at once), so
        sum_max_link_load over this is the slowdown that the fabric adds."""
        return int(self._steps["max_host_link_load"].sum())

    @property
    def spread_flows(self) -> int:
        """Flows the routing split over several paths (``routing.spread``, weighted paths):
        each counts whole on every link of each of its paths, so loads count the flows that
        touch a link, not their bytes."""
        return int(self._core.spread_flows)

    @property
    def times_note(self) -> str | None:
        """Why flow counts do not give step times here (None when they do): sum_max_link_load
        measures time only when every link has one rate and every flow one path."""
        # Over the links the flows use: an unused slower link changes no step's time.
        gbps = self.fabric.links()["gbps"][self._core.link_table()["flows"] > 0]
        why = []
        if len(gbps) and float(gbps.min()) != float(gbps.max()):
            why.append(f"links run at {float(gbps.min()):g} to {float(gbps.max()):g} Gb/s")
        if self.spread_flows:
            why.append(
                f"{self.spread_flows:,} flow{'s' if self.spread_flows != 1 else ''} split over "
                "several paths count whole on each"
            )
        return " and ".join(why) or None

    @property
    def total_link_traversals(self) -> int:
        """Σ over flows of route length in links (= Σ over links and steps of load)."""
        return self._core.total_link_traversals

    # -- tables ------------------------------------------------------------------------
    def steps(self) -> dict[str, np.ndarray]:
        """One row per step: step, flows, conflicts, max_link_load, links_used, conflicting_links."""
        return dict(self._steps)

    def links(self) -> dict[str, Any]:
        """One row per directed link: names, ports, class and totals over the steps done."""
        lt = self.fabric.links()
        names = self.fabric.node_names
        classes = self.fabric.link_class_names()
        totals = self._core.link_table()
        klass = lt["class"]
        return {
            "link": np.arange(self.fabric.num_links),
            "from": [names[i] for i in lt["src"]],
            "from_port": lt["src_port"],
            "to": [names[i] for i in lt["dst"]],
            "to_port": lt["dst_port"],
            "class": [classes[c] for c in klass],
            "flows": totals["flows"],
            "conflicts": totals["conflicts"],
            "conflict_steps": totals["conflict_steps"],
            "max_load": totals["max_load"],
        }

    def levels(self) -> list[dict[str, Any]]:
        """Load distribution per link class (host->leaf, leaf->spine, ...), as port counters see it.

        ``histogram[k]`` counts (link, step) pairs with k flows on the link.
        """
        klass = self.fabric.links()["class"]
        totals = self._core.link_table()["flows"]
        out = []
        for c, (name, hist) in enumerate(
            zip(self.fabric.link_class_names(), self._core.load_histogram(), strict=False)
        ):
            mask = klass == c
            n_links = int(mask.sum())
            link_steps = int(hist.sum())
            loads = np.arange(len(hist))
            per_link = totals[mask]
            out.append(
                {
                    "class": name,
                    "links": n_links,
                    "link_steps": link_steps,
                    "busy_fraction": float(hist[1:].sum() / link_steps) if link_steps else 0.0,
                    "mean_load": float((loads * hist).sum() / link_steps) if link_steps else 0.0,
                    "max_load": int(loads[hist > 0].max()) if link_steps else 0,
                    "conflict_link_steps": int(hist[2:].sum()),
                    "conflicts": int(((loads[2:] - 1) * hist[2:]).sum()),
                    "flows_per_link_min": int(per_link.min()) if n_links else 0,
                    "flows_per_link_mean": float(per_link.mean()) if n_links else 0.0,
                    "flows_per_link_max": int(per_link.max()) if n_links else 0,
                    "histogram": {int(k): int(v) for k, v in enumerate(hist) if v},
                }
            )
        return out

    def worst_steps(self, n: int = 10) -> list[int]:
        """Steps with the most conflicts (ties: earlier first), only those with conflicts."""
        c = self._steps["conflicts"]
        order = np.lexsort((self._steps["step"], -c))
        return [int(self._steps["step"][i]) for i in order[:n] if c[i] > 0]

    def worst_links(self, n: int = 10) -> list[dict[str, Any]]:
        t = self.links()
        order = np.lexsort((t["link"], -t["conflicts"]))
        rows = []
        for i in order[:n]:
            if t["conflicts"][i] == 0:
                break
            rows.append(
                {k: (v[i].item() if isinstance(v, np.ndarray) else v[i]) for k, v in t.items()}
            )
        return rows

    def step_loads(self, step: int) -> np.ndarray:
        """Flows on every directed link in one step (counted from 1); index = link id."""
        self._check_step(step)
        return _core.analysis.step_loads(
            self.routing._core, self.placement.hosts, self.workload._core, step - 1
        )

    def _check_step(self, step: int) -> None:
        if not 1 <= step <= self.workload.num_steps:
            raise DaqnetError(f"step {step} is out of range 1..{self.workload.num_steps}")

    def step_details(
        self, step: int, max_links: int | None = None, max_flows_per_link: int | None = None
    ) -> list[dict[str, Any]]:
        """Links of one step (counted from 1) carrying more than one flow, most loaded first,
        with the flows on them; at most `max_links` links and `max_flows_per_link` flows each
        (``load`` always gives the full count)."""
        self._check_step(step)
        big = 2**62
        lt = self.fabric.links()
        names = self.fabric.node_names
        hosts = self.placement.hosts
        out = []
        for link, load, flows in _core.analysis.step_conflicts(
            self.routing._core,
            hosts,
            self.workload._core,
            step - 1,
            big if max_links is None else max_links,
            big if max_flows_per_link is None else max_flows_per_link,
        ):
            out.append(
                {
                    "step": step,
                    "link": int(link),
                    "from": names[lt["src"][link]],
                    "from_port": int(lt["src_port"][link]),
                    "to": names[lt["dst"][link]],
                    "to_port": int(lt["dst_port"][link]),
                    "load": int(load),
                    "flows": [
                        {
                            "src_rank": int(s),
                            "dst_rank": int(d),
                            "src_host": names[hosts[s]],
                            "dst_host": names[hosts[d]],
                        }
                        for s, d in flows
                    ],
                }
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        """The document of ``daqnet conflicts --json`` (without the scenario's name and
        configuration, which the command adds): the same as summary()."""
        return self.summary()

    def summary(self) -> dict[str, Any]:
        """Totals and per-step rows, as written by ``daqnet conflicts --json``."""
        s = self._steps
        return {
            "hosts": self.fabric.num_hosts,
            "ranks": self.placement.ranks,
            "switches": self.fabric.num_switches,
            "links": self.fabric.num_links,
            "fabric": self.fabric.describe(),
            "routing": self.routing.engine,
            "placement": self.placement.describe(),
            "workload": self.workload.describe(),
            "total_flows": self.total_flows,
            "local_flows": self.local_flows,
            "total_conflicts": self.total_conflicts,
            "max_link_load": self.max_link_load,
            "steps_total": self.steps_total,
            "steps_done": self.steps_done,
            "steps_with_conflicts": self.steps_with_conflicts,
            "sum_max_link_load": self.sum_max_link_load,
            "sum_max_host_link_load": self.sum_max_host_link_load,
            "host_link_conflicts": self.host_link_conflicts,
            "spread_flows": self.spread_flows,
            "times_note": self.times_note,
            "interrupted": self.interrupted,
            "steps": [
                {
                    "step": int(s["step"][i]),
                    "flows": int(s["flows"][i]),
                    "conflicts": int(s["conflicts"][i]),
                    "max_link_load": int(s["max_link_load"][i]),
                    "max_host_link_load": int(s["max_host_link_load"][i]),
                    "links_used": int(s["links_used"][i]),  # as steps.csv has it
                    "conflicting_links": int(s["conflicting_links"][i]),
                }
                for i in range(self.steps_done)
            ],
            "levels": self.levels(),
            "worst_links": self.worst_links(10),
        }

    def to_dataframe(self, table: str | None = None) -> Any:
        """One table as a pandas DataFrame (steps unless `table` names links or levels), as
        every other result has it (daqnet.tables). Needs pandas: pip install 'daqnet[tables]'."""
        from ..tables import to_dataframe

        return to_dataframe(self, table)

    def dataframes(self) -> dict[str, Any]:
        """Every table (steps, links, levels) as a pandas DataFrame, by name."""
        from ..tables import dataframes

        return dataframes(self)

    def __repr__(self) -> str:
        return (
            f"<daqnet.ConflictReport {self.total_conflicts} conflicts in {self.steps_with_conflicts}/"
            f"{self.steps_done} steps, max link load {self.max_link_load}>"
        )


def conflicts(
    routing: Routing,
    placement: Placement,
    workload: Workload,
    progress: Callable[[int, int], object] | None = None,
    threads: int | None = None,
) -> ConflictReport:
    """Analyse every step of `workload` with ranks placed by `placement` on `routing`'s fabric.

    `progress(done, total)` is called about four times a second; Ctrl-C stops the run and
    returns a report of the steps done (``report.interrupted`` is then True). Steps are
    analysed on `threads` threads (None or 0: every available core); the report does not
    depend on it.
    """
    if placement.fabric is not routing.fabric:
        raise DaqnetError("placement and routing are over different fabrics")
    if workload.ranks > placement.ranks:
        raise DaqnetError(
            f"the workload has {workload.ranks} ranks but only {placement.ranks} are placed"
        )

    check_step_memory(workload, ANALYSIS_BYTES_PER_FLOW, "the conflict analysis")

    def report(done: int, total: int) -> bool:
        if progress is not None:
            progress(done, total)
        return True

    core, user_stop = _core.analysis.analyze_conflicts(
        routing._core, placement.hosts, workload._core, report, threads=resolve_threads(threads)
    )
    return ConflictReport(routing, placement, workload, core, user_stop)
