"""The ways in: the command line's commands, the Python API's keywords and
the requests both build, each command's work from its request to its result,
the pytest plugin's parameters, and the worker process's main (``python -m
gemmreg.commands.worker``), which hands each task to the room that knows its
work. Parsing and dispatch; the work itself is in the rooms below.
"""
