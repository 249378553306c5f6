"""Alerts: what the watcher noticed (workers lost, paused or spilling, tasks erred, a scheduler
lost and back, a long computation done), served to the Lab, which notifies.

The watcher process detects them (detection.py, fed each tick's read) and keeps them with the
runs; the rest of this package is the ``dashdock/api/alerts`` routes and the user's choices the
server must know: which kinds notify (``notified``) and how long a computation must run to be
one. May import the base, ``dashdock.history`` and ``dashdock.sources`` (whose sources carry the
mute switch).
"""
