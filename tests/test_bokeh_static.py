"""BokehJS from the local bokeh: compressed harder once per version, never served wrong."""

from __future__ import annotations

import gzip
import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import brotli
from _support import Jupyter

from dashdock.bokeh_static import LocalBokehJS, local_js_dir
from dashdock.precompress import cache_name

SMALL = "bokeh-gl.min.js"  # the smallest BokehJS file keeps these tests quick


def _js_dir_with_one_file(tmp_path: Path) -> tuple[Path, bytes, str]:
    source = local_js_dir()
    assert source is not None
    js_dir = tmp_path / "js"
    js_dir.mkdir()
    shutil.copy(source / SMALL, js_dir / SMALL)
    raw = (js_dir / SMALL).read_bytes()
    return js_dir, raw, hashlib.sha512(raw).hexdigest()


def test_precompressed_bokehjs_decompresses_to_the_very_file(tmp_path: Path) -> None:
    js_dir, raw, version = _js_dir_with_one_file(tmp_path)
    cache = tmp_path / "cache"
    command = [sys.executable, "-m", "dashdock.precompress", str(js_dir), str(cache), SMALL]
    subprocess.run(command, check=True, timeout=300)
    zopfli_body = (cache / cache_name(version, SMALL, "gz")).read_bytes()
    brotli_body = (cache / cache_name(version, SMALL, "br")).read_bytes()
    assert gzip.decompress(zopfli_body) == raw
    assert brotli.decompress(brotli_body) == raw
    assert len(zopfli_body) < len(gzip.compress(raw, 9)) and len(brotli_body) < len(zopfli_body)


async def test_a_damaged_cache_entry_is_never_served_and_is_made_again(tmp_path: Path) -> None:
    js_dir, raw, version = _js_dir_with_one_file(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    damaged = cache / cache_name(version, SMALL, "gz")
    damaged.write_bytes(gzip.compress(b"console.log('not bokeh')"))
    (cache / cache_name(version, SMALL, "br")).write_bytes(b"\x00not brotli")
    served = LocalBokehJS(cache, js_dir)
    try:
        asset = await served.lookup(f"/static/js/{SMALL}", f"v={version}")
        assert asset is not None
        encoding, body = asset.body_for("gzip, deflate, br")
        assert encoding == "gzip" and gzip.decompress(body) == raw  # gzip -9 meanwhile, never the damage
        assert served.precompressing is not None
        await served.precompressing
        encoding, body = asset.body_for("gzip, deflate, br")
        assert encoding == "br" and brotli.decompress(body) == raw
        encoding, body = asset.body_for("gzip")
        assert encoding == "gzip" and body == damaged.read_bytes() and gzip.decompress(body) == raw
        assert asset.body_for("identity") == (None, raw)
        assert asset.body_for("br;q=0, gzip")[0] == "gzip"
    finally:
        await served.close()


async def test_the_bokeh_script_is_sent_as_brotli_to_a_browser_that_offers_it(
    jupyter: Jupyter, dashboard_url: str
) -> None:
    """Chromium offers br over HTTPS (JupyterHub): the cold page costs least there."""
    source = await jupyter.add_source(dashboard_url)
    page = await jupyter.fetch(f"dashdock/proxy/{source['id']}/individual-task-stream")
    (script,) = re.findall(r'src="(static/js/bokeh\.min\.js\?v=([0-9a-f]+))"', page.body.decode())
    path, version = script
    js = await jupyter.fetch(
        f"dashdock/proxy/{source['id']}/{path}",
        headers={"Accept-Encoding": "gzip, deflate, br"},
        decompress=False,
    )
    assert js.code == 200
    assert js.headers["Content-Encoding"] == "br"
    assert js.headers["Vary"] == "Accept-Encoding"
    assert "immutable" in js.headers["Cache-Control"]
    assert hashlib.sha512(brotli.decompress(js.body)).hexdigest() == version
