"""Diagnosis: why a window of a recorded run took as long as it did, named with what each cause cost.

Dask's dashboard guide teaches people to read thirty plots for a handful of symptoms; dashdock has
recorded what those plots show and reads it for them. ``diagnose_window`` is the one entry: the
store's window in, findings out (findings.py says how each is estimated, kinds.py what it means).
"""
