# SPDX-License-Identifier: MIT
"""docs/layers.md is what ci/layer_table.py makes from the built ncnn's layer registry: every
type described, the wrapped ones as shape_guard.cpp wraps them."""

from __future__ import annotations

from ci import layer_table
from ci.ncnn_build import ncnn_prefix


def test_every_registered_layer_type_is_described() -> None:
    types = layer_table.registry(ncnn_prefix("unix") / "include")
    assert len(types) > 100, types
    missing = [t for t in types if t not in layer_table.CHECKS]
    assert not missing, f"ncnn registers types ci/layer_table.py does not describe: {missing}"
    assert layer_table.net_guarded() <= set(types)


def test_the_published_table_is_current() -> None:
    types = layer_table.registry(ncnn_prefix("unix") / "include")
    assert layer_table.DOC.read_text() == layer_table.table(types), "run: python3 -m ci.layer_table --write"
