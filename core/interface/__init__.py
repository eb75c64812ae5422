"""Parsing and dispatch: the command line's commands (its parser is
:mod:`gemmreg.cli`) and the pytest plugin's parameters (the plugin is
:mod:`gemmreg.testing`).
"""
