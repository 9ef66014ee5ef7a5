"""No two modules of the belief study import each other, even through a third (the
importers share their alias rules through ``matching`` and their types through ``items``)."""

from __future__ import annotations

import grimp


def test_no_import_cycle_between_belief_modules():
    graph = grimp.build_graph("ioa_synth")
    modules = sorted(m for m in graph.find_descendants("ioa_synth.belief") if not graph.find_children(m))
    assert "ioa_synth.belief.simpleqa" in modules and "ioa_synth.belief.sources" in modules
    cycles = [f"{a} <-> {b}" for i, a in enumerate(modules) for b in modules[i + 1:]
              if graph.chain_exists(a, b) and graph.chain_exists(b, a)]
    assert not cycles, cycles
