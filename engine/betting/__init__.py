"""The money of a hand: betting rounds, pots, showdown and the award, followed from chip moves
(or from ``action`` inputs) and checked against the rules. Pure and deterministic, like the rest
of the engine: no I/O, no clock."""
