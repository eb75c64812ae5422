"""A command's work from decided options to saved results, with no parsing:
the sweep over points.
"""
