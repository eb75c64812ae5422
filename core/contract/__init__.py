"""What a plugin sees and the vocabulary every layer speaks: the records a
plugin fills in, the backend decided once, inputs, the run-time compiler, the
one error of bad input, the names of task kinds, and the one serialiser every
record goes through (on the wire and on disk); and the map of the layers
(:mod:`gemmreg.contract.layers`). The public names are re-exported by
``gemmreg`` itself; the hooks are :mod:`gemmreg.hookspecs`.
"""
