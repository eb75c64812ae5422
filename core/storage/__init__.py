"""Saved runs and checks: written as handed, read back checked. No
presentation: the views a run keeps are rendered by the caller.
"""
