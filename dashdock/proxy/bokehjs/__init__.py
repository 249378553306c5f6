"""BokehJS served from the bokeh installed here, compressed once, instead of the scheduler's copy.

Imports nothing of dashdock: a pure cache of static files and the process that fills it.
"""
