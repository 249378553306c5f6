"""Alerts: what the history recorder noticed (workers lost, paused or spilling, tasks erred, a
scheduler lost and back, a long computation done), served to the Lab, which notifies.

The recorder detects alerts and keeps them with the runs (``dashdock.history.recorder.alerts``); this
package is the ``dashdock/api/alerts`` routes and the user's choices the server must know:
which kinds notify (``notified``) and how long a computation must run to be one. May import the
base, ``dashdock.history`` and ``dashdock.sources`` (whose sources carry the mute switch).
"""
