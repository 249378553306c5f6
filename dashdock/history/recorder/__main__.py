"""``python -m dashdock.history.recorder``: the entry the history service launches by name."""

from dashdock.history.recorder.process import main

main()
