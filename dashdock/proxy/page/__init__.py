"""dashdock's own script in the dashboard pages it shows: the Lab's theme, no Bokeh connection
notices, and BokehJS from the Lab for a page in a frame (deferral.py, loader.js).

A proxied page runs in an opaque origin, so the Lab cannot reach into it; the only way to theme
what Bokeh draws is a script inside the page. The view handler adds one ``<script>`` tag to each
HTML page it relays (script.py) and serves the script itself (page.js) under the page's own view
prefix, so it carries the same capability and runs under the same sandbox. Imports nothing of dashdock.
"""
