"""The server side of the kernel integration: clients kernels report, and the notebook API.

Owns the kernel environment (dashboard link, client preload), the discovery of kernels' clients
(each becomes a source named after its notebook) and ``dashdock/api/kernel-clients`` and
``dashdock/api/summary``. May import the base (``dashdock.errors``, ``ids``, ``targets``,
``upstream``, ``http``), ``dashdock.sources`` and ``dashdock.kernel.protocol`` (the contract with
what runs in kernels).
"""
