"""BokehJS from the local bokeh: compressed harder once per version, never served wrong."""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import brotli
import pytest
from _support import Jupyter

from dashdock.proxy.bokehjs.precompress import cache_name
from dashdock.proxy.bokehjs.serve import IMMUTABLE, LocalBokehJS, local_js_dir

SMALL = "bokeh-gl.min.js"  # the smallest BokehJS file keeps these tests quick
COMPRESS: dict[str, Callable[[bytes], bytes]] = {"gz": gzip.compress, "br": brotli.compress}
DECOMPRESS: dict[str | None, Callable[[bytes], bytes]] = {
    "gzip": gzip.decompress,
    "br": brotli.decompress,
    None: bytes,
}
# Ways a cache entry can be wrong, each a function of the encoder and the right content.
DAMAGE: dict[str, Callable[[Callable[[bytes], bytes], bytes], bytes]] = {
    "another file": lambda compress, raw: compress(b"console.log('not bokeh')"),
    "truncated": lambda compress, raw: compress(raw)[:-16],
    "trailing bytes": lambda compress, raw: compress(raw) + b"\0" * 8,
    "not compressed": lambda compress, raw: raw,
    # Decodes to the file and then 16 MB more: a check must stop reading at the file's size.
    "a bomb that starts with the file": lambda compress, raw: compress(raw + bytes(16 * 1024**2)),
}


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
    command = [sys.executable, "-m", "dashdock.proxy.bokehjs.precompress", str(js_dir), str(cache), SMALL]
    subprocess.run(command, check=True, timeout=300)
    zopfli_body = (cache / cache_name(version, SMALL, "gz")).read_bytes()
    brotli_body = (cache / cache_name(version, SMALL, "br")).read_bytes()
    assert gzip.decompress(zopfli_body) == raw
    assert brotli.decompress(brotli_body) == raw
    assert len(zopfli_body) < len(gzip.compress(raw, 9)) and len(brotli_body) < len(zopfli_body)


@pytest.mark.parametrize("damage", DAMAGE)
async def test_a_damaged_cache_entry_is_never_served_and_is_made_again(tmp_path: Path, damage: str) -> None:
    js_dir, raw, version = _js_dir_with_one_file(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    for suffix, compress in COMPRESS.items():
        (cache / cache_name(version, SMALL, suffix)).write_bytes(DAMAGE[damage](compress, raw))
    served = LocalBokehJS(cache, js_dir)
    try:
        asset = await served.lookup(f"/static/js/{SMALL}", f"v={version}")
        assert asset is not None
        encoding, body = asset.body_for("gzip, deflate, br")
        assert encoding == "gzip" and gzip.decompress(body) == raw  # gzip -9 meanwhile, never the damage
        assert body == gzip.compress(raw, 9, mtime=0)
        assert served.precompressing is not None
        await served.precompressing
        encoding, body = asset.body_for("gzip, deflate, br")
        assert encoding == "br" and brotli.decompress(body) == raw
        assert body == (cache / cache_name(version, SMALL, "br")).read_bytes()
        encoding, body = asset.body_for("gzip")
        assert encoding == "gzip" and gzip.decompress(body) == raw
        assert body == (cache / cache_name(version, SMALL, "gz")).read_bytes()
        assert asset.body_for("identity") == (None, raw)
        assert asset.body_for("br;q=0, gzip")[0] == "gzip"
    finally:
        await served.close()


async def test_precompression_starts_with_the_server_so_the_first_pane_gets_the_small_form(
    tmp_path: Path,
) -> None:
    js_dir, raw, version = _js_dir_with_one_file(tmp_path)
    cache = tmp_path / "cache"
    served = LocalBokehJS(cache, js_dir)
    try:
        served.start()  # what the extension does when the server starts; no page asked yet
        started = served.precompressing
        assert started is not None
        await started
        asset = await served.lookup(f"/static/js/{SMALL}", f"v={version}")
        assert asset is not None
        encoding, body = asset.body_for("gzip, deflate, br")
        assert encoding == "br" and brotli.decompress(body) == raw
        assert served.precompressing is started  # the cache was complete: nothing more to do
    finally:
        await served.close()


async def _bokeh_scripts(jupyter: Jupyter, source: dict[str, Any]) -> list[tuple[str, str]]:
    """(path under the proxy, file name) of every BokehJS script a task-stream page loads."""
    page = await jupyter.proxied(f"dashdock/proxy/{source['id']}/individual-task-stream")
    scripts = re.findall(r'src="(static/js/(bokeh[a-z-]*\.min\.js)\?v=[0-9a-f]+)"', page.body.decode())
    assert len(scripts) >= 4, page.body[:2000]  # bokeh, gl, widgets, tables, mathjax today
    return scripts


@pytest.mark.parametrize(
    ("offered", "expected"),
    [
        ("gzip, deflate, br", "br"),  # Chromium over HTTPS (JupyterHub)
        ("gzip, deflate", "gzip"),  # Chromium over plain HTTP
        ("br;q=0, gzip", "gzip"),
        ("identity", None),
    ],
)
async def test_each_bokeh_script_is_the_very_file_in_the_best_encoding_the_browser_offered(
    jupyter: Jupyter, dashboard_url: str, offered: str, expected: str | None
) -> None:
    source = await jupyter.add_source(dashboard_url)
    js_dir = local_js_dir()
    assert js_dir is not None
    for path, name in await _bokeh_scripts(jupyter, source):
        js = await jupyter.proxied(
            f"dashdock/proxy/{source['id']}/{path}", headers={"Accept-Encoding": offered}, decompress=False
        )
        assert js.code == 200
        assert js.headers.get("Content-Encoding") == expected
        raw = (js_dir / name).read_bytes()
        assert DECOMPRESS[expected](js.body) == raw
        if expected == "gzip":  # the precompressed (zopfli) form, not the per-server gzip -9
            assert len(js.body) < len(gzip.compress(raw, 9))
        assert js.headers["Cache-Control"] == IMMUTABLE
        assert js.headers["Vary"] == "Accept-Encoding"


class TestADamagedCacheEntryOnTheServer:
    """The cache directory survives server restarts; whatever it holds, a browser gets the file."""

    @pytest.fixture
    def damaged(self, tmp_path: Path, bokeh_cache: Path) -> tuple[Path, Path]:
        """A copy of the session's complete cache whose bokeh.min.js entries are another file."""
        js_dir = local_js_dir()
        assert js_dir is not None
        version = hashlib.sha512((js_dir / "bokeh.min.js").read_bytes()).hexdigest()
        cache = tmp_path / "bokeh-cache"
        shutil.copytree(bokeh_cache, cache)
        for suffix, compress in COMPRESS.items():
            entry = cache / cache_name(version, "bokeh.min.js", suffix)
            entry.write_bytes(compress(b"alert('not bokeh')"))
        return cache, cache / cache_name(version, "bokeh.min.js", "br")

    @pytest.fixture
    def dashdock_config(self, damaged: tuple[Path, Path]) -> dict[str, Any]:
        return {"cache_dir": str(damaged[0])}

    async def test_is_ignored_then_replaced(
        self, jupyter: Jupyter, dashboard_url: str, damaged: tuple[Path, Path]
    ) -> None:
        source = await jupyter.add_source(dashboard_url)
        js_dir = local_js_dir()
        assert js_dir is not None
        raw = (js_dir / "bokeh.min.js").read_bytes()
        (path,) = [path for path, name in await _bokeh_scripts(jupyter, source) if name == "bokeh.min.js"]
        url = f"dashdock/proxy/{source['id']}/{path}"
        first = await jupyter.proxied(url, headers={"Accept-Encoding": "gzip, deflate, br"}, decompress=False)
        assert first.code == 200
        assert first.headers["Content-Encoding"] == "gzip"  # gzip -9, made in memory
        assert gzip.decompress(first.body) == raw
        assert first.headers["Cache-Control"] == IMMUTABLE

        # The low-priority process makes the entries again; a generous bound, not a timing check.
        for _ in range(600):
            later = await jupyter.proxied(
                url, headers={"Accept-Encoding": "gzip, deflate, br"}, decompress=False
            )
            if later.headers.get("Content-Encoding") == "br":
                break
            await asyncio.sleep(0.2)
        assert later.headers.get("Content-Encoding") == "br"
        assert brotli.decompress(later.body) == raw
        assert later.body == damaged[1].read_bytes()
        assert later.headers["Cache-Control"] == IMMUTABLE
