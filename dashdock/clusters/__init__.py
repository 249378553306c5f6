"""Managed clusters: started, scaled, restarted and shut down, each in a host process of its own.

Owns the manager, the limits, the cluster class resolved from traits and Dask's config, the host
process (``python -m dashdock.clusters.host``) and the ``dashdock/api/clusters`` handlers. May
import the base (``dashdock.errors``, ``ids``, ``targets``, ``upstream``, ``http``),
``dashdock.sources`` (a cluster's dashboard is a source) and ``dashdock.kernel.protocol``
(variables a host must not inherit).
"""
