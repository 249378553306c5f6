"""``python -m dashdock.watcher``: the entry the history service launches by name."""

from dashdock.watcher.process import main

main()
