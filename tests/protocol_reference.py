"""A small, independent discrete-event reference for the protocol simulation.

Written from docs/simulate.md and docs/bench.md, not from cpp/simulate/protocol.cpp: no
daqnet simulation code is used. It plays the event-manager protocol with a heap of timed
messages and fragment flows shared max-min fairly, the rates re-solved by progressive
filling whenever a flow starts or ends. Time, bytes and rates are Fractions, so with
fixed fragment sizes every figure is exact and ties are ties.

The model (docs/simulate.md, "Protocol mode"):

- Node k has a readout unit (RU) and a builder unit (BU) on host ``hosts[k]``; the event
  manager (EM) sits on node 0.
- A command (credit, assignment, request, done) from host a to host b takes the route's
  latency plus ``command_bytes`` at the route's slowest link; within a host, no time. It
  takes no bandwidth.
- At the start every BU sends its ``credits`` credits to the EM, which gives events 0, 1,
  2, ... to the credits in the order they arrive. It tells the BU; with PUSH also every RU.
  A built event's "done" returns its credit. After the window closes it assigns nothing.
- A BU's k-th gather reads the RUs from (builder + k) mod N round (barrel; all-at-once
  asks for every fragment at once, barrel otherwise with ``in_flight`` at a time). It serves
  its oldest event first. Posting a receive is what lets a PUSHed fragment move (MPI's
  rendezvous); with PULL the BU also sends a request and the RU sends when asked. With
  ``eager`` (TCP) a PUSHed fragment to another node moves as soon as its RU sends it; one
  that arrives before its receive waits at the BU, and the receive posted later completes
  at that instant (a message due now, after those already due).
- An RU sends what it was asked for in event order. ``max_in_flight`` (0 = none) caps a
  node's transfers (sends and receives together); a unit's oldest event may pass it.
  With ``rate_hz`` (0 = none) event e's fragments exist from e / rate_hz on: an RU sends
  none before, and the event's latency counts from then (its trigger), not from its
  assignment.
- A fragment moves ``fragment + meta`` bytes: between two hosts it waits for its route's
  latency, then is a flow over the route's links at its max-min fair rate; on one host it is
  a copy at ``local_gbps`` (0: at once). An event is built when its N fragments are in.
- The window opens after ``warmup_events`` are built and closes when ``events`` more are
  built; an edge reached at an instant is taken once the flows ending then are accounted
  for (or the message that built the event), and the run stops at the close. The window's
  payload is the fragment data that reached builders over the network in it, the moved
  part of fragments still moving included, and each event's builder's own fragment when
  the event is built.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from fractions import Fraction

from reference import plain_graph, trace

INF = None  # an unlimited rate


def max_min_rates(flows, capacity):
    """Progressive filling: every unfrozen flow's rate rises together until a link it uses is
    full or it meets its own cap; those flows freeze, the others go on.

    ``flows``: {id: (links, cap or None)}; ``capacity``: {link: bytes/s}. Returns {id: rate},
    None for a flow that nothing limits (it is instantaneous).
    """
    rate = {f: Fraction(0) for f in flows}
    left = {}
    for links, _ in flows.values():
        for link in links:
            left[link] = Fraction(capacity[link])
    active = set(flows)
    while active:
        users = {}
        for f in active:
            for link in flows[f][0]:
                users[link] = users.get(link, 0) + 1
        steps = [left[link] / n for link, n in users.items()]
        steps += [flows[f][1] - rate[f] for f in active if flows[f][1] is not None]
        if not steps:  # nothing limits the rest
            for f in active:
                rate[f] = None
            break
        step = min(steps)
        for f in active:
            rate[f] += step
        for link, n in users.items():
            left[link] -= step * n
        full = {link for link in users if left[link] == 0}
        active = {
            f
            for f in active
            if not (full & set(flows[f][0])) and (flows[f][1] is None or rate[f] < flows[f][1])
        }
    return rate


@dataclass
class Network:
    """Hosts, directed links and routes: all the reference knows of a fabric."""

    capacity: list  # per link, bytes/s (Fraction)
    latency: list  # per link, seconds (Fraction)
    routes: dict = field(default_factory=dict)  # (host a, host b) -> [link ids]

    @classmethod
    def of(cls, fabric, routing):
        """Links from the fabric's table, routes traced hop by hop through the forwarding
        tables (tests/reference.py), nothing from daqnet's simulation."""
        lt = fabric.links()
        net = cls(
            [Fraction(float(g)) * 10**9 / 8 for g in lt["gbps"]],
            [Fraction(float(t)) for t in lt["latency_seconds"]],
        )
        graph, table = plain_graph(fabric), routing.table()
        for a in range(fabric.num_hosts):
            for b in range(fabric.num_hosts):
                if a != b:
                    net.routes[a, b] = trace(graph, table, fabric.num_hosts, a, b)
        return net

    def route_latency(self, a, b):
        return sum((self.latency[link] for link in self.routes[a, b]), Fraction(0))

    def command_seconds(self, a, b, nbytes):
        if a == b:
            return Fraction(0)
        slowest = min(self.capacity[link] for link in self.routes[a, b])
        return self.route_latency(a, b) + Fraction(nbytes) / slowest


@dataclass
class Built:
    event: int
    builder: int
    assigned: Fraction
    built: Fraction
    bytes: int
    made: Fraction | None = None  # when its fragments exist (rate_hz)

    @property
    def latency(self):
        return self.built - (self.assigned if self.made is None else self.made)


@dataclass
class Result:
    built: list  # Built, in the order events were built
    window_start: Fraction
    window_end: Fraction
    first_in_window: int
    window_events: int
    window_payload: Fraction  # fragment data delivered in the window, moving parts included
    partial_fragments: int  # received at the end for events not yet built ...
    partial_bytes: int  # ... and their data bytes
    link_bytes: list  # data + meta-data bytes over each link, moving parts included
    max_busy_slots: int
    max_gather_in_flight: int

    @property
    def in_window(self):
        return self.built[self.first_in_window : self.first_in_window + self.window_events]


class _Slot:
    def __init__(self):
        self.busy = False
        self.event = -1
        self.assigned = Fraction(0)
        self.order = []
        self.next = 0
        self.outstanding = 0
        self.complete = 0
        self.bytes = 0


class _Cap:
    """Transfers in flight of one node (0 = no cap); the exempt one may pass a full cap."""

    def __init__(self, cap):
        self.cap, self.used = cap, 0

    def take(self, exempt):
        if self.cap and self.used >= self.cap and not exempt:
            return False
        self.used += 1
        return True

    def give(self):
        self.used -= 1


def simulate(
    network,
    hosts,
    *,
    protocol="push",
    schedule="barrel",
    credits=2,
    in_flight=8,
    max_in_flight=0,
    fragment_bytes=65536,
    meta_bytes=1024,
    command_bytes=64,
    events=20,
    warmup_events=0,
    local_gbps=0.0,
    last_first=False,
    eager=False,
    rate_hz=0.0,
):
    """Play the protocol on ``network`` with node k on host ``hosts[k]``.

    Fixed fragment sizes: ``fragment_bytes`` for every RU, or a list cycled over the RUs
    (as ``bench.fragment_bytes_per_ru``; multiples of 8, at least 64, as daqnet rounds).
    Flows ending at the same instant are handled in the order they started, or the reverse
    with ``last_first``: a result that depends on it is a tie that no order settles.
    """
    assert schedule in ("barrel", "all-at-once")
    n = len(hosts)
    window = n if schedule == "all-at-once" else in_flight
    per_ru = fragment_bytes if isinstance(fragment_bytes, list) else [fragment_bytes]
    size = [per_ru[r % len(per_ru)] for r in range(n)]
    assert all(b % 8 == 0 and b >= 64 for b in size)
    local_rate = Fraction(local_gbps) * 10**9 / 8 if local_gbps > 0 else None
    rate = Fraction(rate_hz) if rate_hz > 0 else None
    wakes = set()  # (RU, time) of the wakes sent, one per instant
    em = hosts[0]

    now = Fraction(0)
    queue = []  # (time, seq, what, args): messages and flow starts, in the order sent
    seq = [0]
    flows = {}  # id -> dict(links, cap, left, rate, transfer)
    flow_seq = [0]
    credits_in = []  # credits at the EM, in order of arrival
    next_event = [0]
    slots = [[_Slot() for _ in range(credits)] for _ in range(n)]
    gathers = [0] * n
    pending = [[] for _ in range(n)]  # per RU: (event, builder, slot) asked for
    sending = [[] for _ in range(n)]  # per RU: events of its transfers under way
    caps = [_Cap(max_in_flight) for _ in range(n)]
    posted, waiting = {}, {}  # (event, ru) -> (bu, slot); (event, ru) -> transfer
    unasked, arrived = set(), set()  # eager: (event, ru) moving, or there, before its receive
    built = []
    st = {"open": False, "closed": False, "edge": None, "first": 0, "t0": None, "p0": None}
    delivered = [Fraction(0)]  # fragment data of complete transfers
    link_bytes = [Fraction(0)] * len(network.capacity)  # ... and their bytes over each link
    limits = {"busy": 0, "gather": 0}

    def send(when, what, *args):
        heapq.heappush(queue, (when, seq[0], what, args))
        seq[0] += 1

    def command(src, dst, what, *args):
        send(now + network.command_seconds(src, dst, command_bytes), what, *args)

    def payload_now():
        moving = sum(
            (
                f["frag"] * (f["total"] - f["left"]) / f["total"]
                for f in flows.values()
                if f["t"]["ru"] != f["t"]["bu"]  # a node's own fragment counts when built
            ),
            Fraction(0),
        )
        return delivered[0] + moving

    def assign():
        while credits_in and not st["closed"]:
            b, k = credits_in.pop(0)
            e = next_event[0]
            next_event[0] += 1
            command(em, hosts[b], "assign_bu", b, k, e)
            if protocol == "push":
                for r in range(n):
                    command(em, hosts[r], "assign_ru", r, e, b, k)

    def bu_begin(b, k, e):
        s = slots[b][k]
        s.busy, s.event, s.assigned = True, e, now
        start = (b + gathers[b]) % n
        gathers[b] += 1
        s.order = [(start + i) % n for i in range(n)]
        s.next = s.outstanding = s.complete = s.bytes = 0
        limits["busy"] = max(limits["busy"], sum(x.busy for x in slots[b]))

    def bu_pump(b):
        busy = [k for k in range(credits) if slots[b][k].busy]
        if not busy:
            return
        oldest = min(busy, key=lambda k: slots[b][k].event)
        for k in [oldest] + [k for k in range(credits) if k != oldest]:
            s = slots[b][k]
            while s.busy and s.outstanding < window and s.next < n:
                if not caps[b].take(k == oldest and s.outstanding == 0):
                    return
                r = s.order[s.next]
                s.next += 1
                post(b, k, r)

    def post(b, k, r):
        s = slots[b][k]
        s.outstanding += 1
        limits["gather"] = max(limits["gather"], s.outstanding)
        if (s.event, r) in waiting:
            begin(waiting.pop((s.event, r)))
        elif (s.event, r) in unasked:
            unasked.discard((s.event, r))
        elif (s.event, r) in arrived:
            arrived.discard((s.event, r))
            send(now, "received", b, k, r)
        else:
            posted[s.event, r] = (b, k)
        if protocol == "pull":
            command(hosts[b], hosts[r], "request", r, s.event, b, k)

    def ru_pump(r):
        while pending[r]:
            e, b, k = min(pending[r])
            if rate is not None and e / rate > now:  # not made yet: pumped again then
                if (r, e / rate) not in wakes:
                    wakes.add((r, e / rate))
                    send(e / rate, "wake", r)
                return
            exempt = not sending[r] or e < min(sending[r])
            if not caps[r].take(exempt):
                return
            pending[r].remove((e, b, k))
            sending[r].append(e)
            t = {"event": e, "ru": r, "bu": b, "slot": k}
            if (e, r) in posted:
                del posted[e, r]
                begin(t)
            elif eager and r != b:
                unasked.add((e, r))
                begin(t)
            else:
                waiting[e, r] = t  # PUSH: moves once the builder posts its receive

    def begin(t):
        if t["ru"] == t["bu"]:
            start_flow(t, [], local_rate)
        else:
            a, b = hosts[t["ru"]], hosts[t["bu"]]
            send(now + network.route_latency(a, b), "start_flow", t)

    def start_flow(t, links, cap):
        frag = Fraction(size[t["ru"]])
        total = frag + meta_bytes  # the meta-data goes with its fragment
        flows[flow_seq[0]] = {
            "links": links,
            "cap": cap,
            "frag": frag,
            "total": total,
            "left": total,
            "rate": None,
            "t": t,
        }
        flow_seq[0] += 1

    def transfer_done(t):
        r, b, k = t["ru"], t["bu"], t["slot"]
        if r != b:
            delivered[0] += size[r]
            for link in network.routes[hosts[r], hosts[b]]:
                link_bytes[link] += size[r] + meta_bytes
        sending[r].remove(t["event"])
        caps[r].give()
        if (t["event"], r) in unasked:  # eager, no receive yet: it waits at the builder
            unasked.discard((t["event"], r))
            arrived.add((t["event"], r))
            ru_pump(r)
            return
        received(b, k, r)
        bu_pump(b)
        ru_pump(r)

    def received(b, k, r):
        s = slots[b][k]
        s.outstanding -= 1
        s.complete += 1
        s.bytes += size[r]
        caps[b].give()
        if s.complete == n:
            s.busy = False
            delivered[0] += size[b]  # its own fragment, in its host all along
            made = s.event / rate if rate is not None else None
            built.append(Built(s.event, b, s.assigned, now, s.bytes, made))
            command(hosts[b], em, "credit", b, k)
            count = len(built)
            if st["edge"] is None and not st["open"] and count == warmup_events:
                st["edge"], st["first"] = "open", count
            elif st["edge"] is None and st["open"] and count - st["first"] == events:
                st["edge"] = "close"

    def open_window():
        st["open"], st["t0"], st["p0"] = True, now, payload_now()

    def take_edge():
        if st["edge"] == "open":
            open_window()
        elif st["edge"] == "close":
            st["closed"] = True
        st["edge"] = None

    def handle(what, args):
        if what == "credit":
            credits_in.append(args)
            assign()
        elif what == "assign_bu":
            bu_begin(*args)
            bu_pump(args[0])
        elif what in ("assign_ru", "request"):
            r, e, b, k = args
            pending[r].append((e, b, k))
            ru_pump(r)
        elif what == "wake":
            ru_pump(args[0])
        elif what == "received":
            b, k, r = args
            received(b, k, r)
            bu_pump(b)
        elif what == "start_flow":
            (t,) = args
            start_flow(t, network.routes[hosts[t["ru"]], hosts[t["bu"]]], None)

    for b in range(n):
        for k in range(credits):
            command(hosts[b], em, "credit", b, k)
    if warmup_events == 0:
        open_window()

    while not st["closed"]:
        # Rates for what is moving now, then the next instant: a flow ends or a message is due.
        rates = max_min_rates(
            {f: (v["links"], v["cap"]) for f, v in flows.items()}, network.capacity
        )
        ends = {}
        for f, v in flows.items():
            v["rate"] = rates[f]
            ends[f] = now if rates[f] is None else now + v["left"] / rates[f]
        t_next = min([*ends.values(), *([queue[0][0]] if queue else [])], default=None)
        assert t_next is not None, "stalled"
        for v in flows.values():
            v["left"] = Fraction(0) if v["rate"] is None else v["left"] - v["rate"] * (t_next - now)
        now = t_next
        # Flows ending now, in the order they started; then the window's edges; then the
        # messages due now, in the order they were sent (those sent meanwhile for now too).
        done = [f for f in sorted(flows, reverse=last_first) if ends[f] == now]
        for f in done:
            transfer_done(flows.pop(f)["t"])
        take_edge()
        while queue and queue[0][0] == now and not st["closed"]:
            _, _, what, args = heapq.heappop(queue)
            handle(what, args)
            take_edge()  # an event built by a message (eager: a receive posted late)
        if st["closed"]:
            break

    for f in flows.values():  # the moved part of fragments still moving
        for link in f["links"]:
            link_bytes[link] += f["total"] - f["left"]
    under_way = [s for node in slots for s in node if s.busy]
    return Result(
        built=built,
        window_start=st["t0"],
        window_end=now,
        first_in_window=st["first"],
        window_events=events,
        window_payload=payload_now() - st["p0"],
        partial_fragments=sum(s.complete for s in under_way),
        partial_bytes=sum(s.bytes for s in under_way),
        link_bytes=link_bytes,
        max_busy_slots=limits["busy"],
        max_gather_in_flight=limits["gather"],
    )
