"""Finding plugins and loading each one contained (its output captured,
torch's state watched, Ctrl-C told apart); can a kernel run here.
"""
