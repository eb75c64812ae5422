"""What a plugin sees and the vocabulary every room speaks: the records a
plugin fills in, the backend decided once, inputs, the run-time compiler, the
one error of bad input and the user's options checked before any work, the
names of task kinds, and the one serialiser every record goes through (on the
wire and on disk); and the map of the rooms (:mod:`gemmreg.contract.rooms`).
The public names are re-exported by ``gemmreg`` itself; the hooks are
:mod:`gemmreg.hookspecs`.
"""
