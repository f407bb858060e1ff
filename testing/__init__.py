"""Test-only tooling, not shipped: hand generators, renderers, oracles, broker fixtures."""
