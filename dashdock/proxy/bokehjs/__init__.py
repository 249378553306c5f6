"""BokehJS served from the bokeh installed here, compressed once, instead of the scheduler's copy.

A cache of static files and the process that fills it; imports only ``dashdock.kernel.files``.
"""
