"""A drawn page redraws as soon as what it reads has changed, and never more often than Dask's own
page of it (live/pacing.py): on a busy cluster the mirror moves at every look, and a page Dask
redraws every 500 ms would otherwise redraw three times as often, for no one to see."""

from __future__ import annotations

import pytest
from bokeh.document import Document
from bokeh.server.callbacks import PeriodicCallback

from dashdock.live.mirror import SchedulerMirror
from dashdock.live.pacing import pace


class _Page:
    """A drawn page of ``path`` whose redraw (Dask's, every ``dask_ms``) notes when it ran."""

    def __init__(self, path: str, dask_ms: int) -> None:
        self.mirror, self.doc, self.now = SchedulerMirror(), Document(), 0.0
        pace(self.doc, self.mirror, is_seen=lambda _: True, path=path, clock=lambda: self.now)
        self.redrawn: list[float] = []
        self.doc.add_periodic_callback(lambda: self.redrawn.append(self.now), dask_ms)
        [look] = self.doc.session_callbacks
        assert isinstance(look, PeriodicCallback)
        self.look = look

    def look_at(self, seconds: float, changed: bool) -> None:
        self.now = seconds
        if changed:
            assert self.mirror.update_state({})  # the scheduler's state, read again
        self.look.callback()


@pytest.mark.parametrize(("dask_ms", "looks_between"), [(100, 1), (200, 1), (500, 3), (1000, 6)])
def test_a_busy_page_redraws_on_the_look_nearest_dasks_period(dask_ms: int, looks_between: int) -> None:
    page = _Page("/individual-workers", dask_ms)
    look_s = page.look.period / 1000
    for n in range(30):
        page.look_at(n * look_s, changed=True)
    gaps = {round(later - earlier, 6) for earlier, later in zip(page.redrawn, page.redrawn[1:], strict=False)}
    # Between 0.8x and 1x Dask's period: Dask's 100 ms pages (Task Stream, Progress, ...) at every
    # look of 80 ms, its 500 ms pages every 480 ms.
    assert gaps == {round(looks_between * look_s, 6)}


def test_a_quiet_page_redraws_at_the_first_look_after_a_change() -> None:
    page = _Page("/individual-workers", 500)
    look_s = page.look.period / 1000
    page.look_at(0.0, changed=True)
    for n in range(1, 10):  # nothing new for 1.4 s: nothing is sent
        page.look_at(n * look_s, changed=False)
    assert page.redrawn == [0.0]
    page.look_at(10 * look_s, changed=True)  # the cap is long past: drawn at once
    assert page.redrawn == [0.0, 10 * look_s]
    page.look_at(11 * look_s, changed=True)  # 160 ms later: held until Dask's page would redraw
    page.look_at(12 * look_s, changed=False)
    page.look_at(13 * look_s, changed=False)  # held, and drawn on the look nearest 500 ms
    assert page.redrawn == [0.0, 10 * look_s, 13 * look_s]
