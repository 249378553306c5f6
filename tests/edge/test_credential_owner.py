"""A credential goes only to the dashboard it was given for, not to whoever takes its port next.

On a shared login node, a dashboard's port is free once its process ends, and another user may
listen there. Here the authenticating front in front of the session's LocalCluster is the dashboard
that was given credentials; it ends, and a listener run as another user (``nobody``) takes its port
and writes down every request it hears. Binding a port as another user needs root, which CI has.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from _auth_front import AuthFront, Credential
from _support import Jupyter

SECRET = "s3cret-owner-61c0"
CREDENTIAL = Credential("header", "Authorization", f"Bearer {SECRET}")
NOBODY = 65534
# Another user's program: it answers every request like a dashboard would and prints what it heard.
LISTENER = """
import json, socket, sys
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", int(sys.argv[1])))
server.listen(16)
print("ready", flush=True)
while True:
    connection, _ = server.accept()
    head = b""
    while b"\\r\\n\\r\\n" not in head:
        data = connection.recv(65536)
        if not data:
            break
        head += data
    print(json.dumps(head.decode("latin-1")), flush=True)
    connection.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\nConnection: close\\r\\n\\r\\nok")
    connection.close()
"""

pytestmark = pytest.mark.skipif(
    os.getuid() != 0 or shutil.which("python3", path="/usr/bin") is None,
    reason="listening as another user needs root and a system python3 (CI has both)",
)


@contextlib.contextmanager
def listener_as_nobody(port: int) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        ["/usr/bin/python3", "-c", LISTENER, str(port)],
        user=NOBODY,
        stdout=subprocess.PIPE,
        text=True,
        cwd="/",
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        yield process
    finally:
        process.kill()
        process.wait()


def _heard(process: subprocess.Popen[str]) -> list[str]:
    process.kill()
    out, _ = process.communicate()
    return [json.loads(line) for line in out.splitlines() if line.startswith('"')]


async def _health(jupyter: Jupyter, source_id: str) -> dict[str, Any]:
    code, listing = await jupyter.api("GET", "sources?check=1")
    assert code == 200
    (source,) = [item for item in listing["sources"] if item["id"] == source_id]
    return source


async def test_a_port_taken_over_by_another_user_never_gets_the_credential(
    jupyter: Jupyter, dashboard_port: int
) -> None:
    front = AuthFront(CREDENTIAL, dashboard_port)
    await front.start()
    code, source = await jupyter.api(
        "POST", "sources", {"url": front.url + "/status", "credentials": CREDENTIAL.api()}
    )
    assert code == 201, source
    assert any(SECRET in head for head in front.seen)
    port = front.port
    await front.close()  # the dashboard's process ends

    with listener_as_nobody(port) as listener:
        checked = await _health(jupyter, source["id"])
        page = await jupyter.proxied(f"dashdock/proxy/{source['id']}/individual-task-stream")
        heard = _heard(listener)
    assert heard, "the listener heard nothing: the test did not reach it"
    assert not [head for head in heard if SECRET in head], heard
    # The user is asked: the source says why, and offers its Credentials button (refused).
    assert checked["needsCredentials"] is True, checked
    assert f"Another user now listens on 127.0.0.1:{port}" in checked["health"]["message"], checked
    assert page.code == 200 and SECRET not in page.body.decode(errors="replace")

    # The dashboard comes back as the user who gave the credentials: they go again, unasked.
    back = AuthFront(CREDENTIAL, dashboard_port, port=port)
    await back.start()
    try:
        for _ in range(50):  # the old listener's socket may linger a moment after it is killed
            checked = await _health(jupyter, source["id"])
            if checked["health"]["status"] == "up":
                break
            await asyncio.sleep(0.1)
        assert checked["health"]["status"] == "up" and checked["needsCredentials"] is False, checked
        assert any(SECRET in head for head in back.seen)
    finally:
        await back.close()
