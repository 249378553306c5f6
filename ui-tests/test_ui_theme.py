"""Dark themes: plots take the Lab's colours for all but their data, whose colours keep their meaning."""

from __future__ import annotations

import io

from helpers import next_frames, pane, pane_frame, set_theme, wait_for_bokeh_plot, wait_until
from lab import OUTPUT, DaskCluster, Lab, open_lab, screenshot
from PIL import Image
from playwright.sync_api import Page, expect

# Colours of what a plot draws besides its data, read from the page's Bokeh document as
# [what, text colour, background it sits on] (CSS colours resolved by the browser to rgba).
_TEXT_ON_BACKGROUND = """() => {
  const probe = document.createElement('canvas').getContext('2d');
  const rgba = color => {
    if (color == null) return null;
    probe.clearRect(0, 0, 1, 1);
    probe.fillStyle = typeof color === 'object' ? color.value : color;
    probe.fillRect(0, 0, 1, 1);
    return Array.from(probe.getImageData(0, 0, 1, 1).data);
  };
  const found = [];
  for (const doc of Bokeh.documents) {
    for (const plot of doc.all_models) {
      if (!('border_fill_color' in plot && 'renderers' in plot)) continue;
      const page = plot.border_fill_color ?? getComputedStyle(document.body).backgroundColor;
      const titles = plot.title ? [plot.title] : [];
      for (const title of titles) found.push(['title', rgba(title.text_color), rgba(page)]);
      for (const part of [...plot.left, ...plot.below, ...plot.right, ...plot.above, ...plot.center]) {
        if ('major_label_text_color' in part) {
          found.push(['tick labels', rgba(part.major_label_text_color), rgba(page)]);
        } else if ('items' in part && 'label_text_color' in part) {
          found.push(['legend', rgba(part.label_text_color), rgba(part.background_fill_color)]);
        }
      }
    }
  }
  return found;
}"""

# Each legend swatch's fill colour and the legend's background, as rgba.
_SWATCHES = """() => {
  const probe = document.createElement('canvas').getContext('2d');
  const rgba = color => {
    probe.clearRect(0, 0, 1, 1);
    probe.fillStyle = color;
    probe.fillRect(0, 0, 1, 1);
    return Array.from(probe.getImageData(0, 0, 1, 1).data);
  };
  const found = [];
  for (const doc of Bokeh.documents) {
    for (const legend of doc.all_models) {
      if (!('items' in legend && 'label_text_color' in legend)) continue;
      for (const item of legend.items) {
        for (const renderer of item.renderers) {
          const fill = renderer.glyph && renderer.glyph.fill_color;
          if (fill && typeof fill === 'object' && typeof fill.value === 'string') {
            found.push([rgba(fill.value), rgba(legend.background_fill_color ?? '#ffffff')]);
          }
        }
      }
    }
  }
  return found;
}"""


def _luminance(rgb: tuple[float, float, float]) -> float:
    def channel(value: float) -> float:
        value /= 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(color: list[int], background: list[int]) -> float:
    """WCAG contrast ratio of `color` (rgba, 0-255) drawn on an opaque `background`."""
    alpha = color[3] / 255
    seen = tuple(alpha * c + (1 - alpha) * b for c, b in zip(color[:3], background[:3], strict=True))
    lighter, darker = sorted((_luminance(seen), _luminance(tuple(background[:3]))), reverse=True)  # type: ignore[arg-type]
    return (lighter + 0.05) / (darker + 0.05)


def _open(page: Page, source: str, path: str, name: str) -> None:
    page.evaluate(
        "([source, path]) => window.jupyterapp.commands.execute('dashdock:open-plot', {source, path})",
        [source, path],
    )
    wait_for_bokeh_plot(page, name)


def _wait_for_page_theme(page: Page, name: str, theme: str) -> None:
    """The page script has taken the theme (`dark` or the dashboard's `own`): it sets the mark and
    recolours the document's models in one go, and Bokeh paints them in its next frames."""
    frame = pane_frame(page, name)
    frame.wait_for_function(
        "theme => document.documentElement.dataset.dashdockTheme === theme", arg=theme, timeout=15_000
    )
    next_frames(frame)


def _pixels(page: Page, name: str) -> Image.Image:
    return Image.open(io.BytesIO(pane(page, name).locator("iframe[src]").screenshot())).convert("RGB")


def _settled_pixels(page: Page, name: str) -> Image.Image:
    """The pane's pixels once two screenshots in a row are the same: all it was sent is drawn."""
    last = _pixels(page, name)

    def settled() -> Image.Image | None:
        nonlocal last
        next_frames(pane_frame(page, name))
        seen, last = last, _pixels(page, name)
        return last if seen.tobytes() == last.tobytes() else None

    return wait_until(settled, timeout=30)  # type: ignore[return-value]


# The tasks a Task Stream holds: the rows of its data sources that have a duration column.
_TASKS_DRAWN = """() => {
    let tasks = 0;
    for (const model of Bokeh.documents[0].all_models) {
        if (!model.data) continue;
        const data = model.data instanceof Map ? Object.fromEntries(model.data) : model.data;
        tasks += (data.duration || []).length;
    }
    return tasks;
}"""


def test_dark_plot_keeps_the_colours_of_its_data(browser, lab: Lab, dask_cluster: DaskCluster) -> None:
    """The same frozen Task Stream, light then dark: every data pixel keeps its colour, the rest goes dark."""
    source = lab.api("dashdock/api/sources", "POST", {"url": dask_cluster.dashboard})["id"]  # type: ignore[index]
    page = open_lab(browser, lab, "dark-data")
    _open(page, source, "/individual-task-stream", "Task Stream")
    # Tasks on the stream before it is frozen: the sample work's rounds come every few seconds,
    # later on a loaded machine.
    stream = pane_frame(page, "Task Stream")
    wait_until(lambda: stream.evaluate(_TASKS_DRAWN) >= 200, timeout=90)
    pane(page, "Task Stream").get_by_role("button", name="Pause").first.click()
    expect(pane(page, "Task Stream")).to_have_attribute("data-status", "paused")
    light = _settled_pixels(page, "Task Stream")  # with what was in flight when it paused
    set_theme(page, "JupyterLab Dark")
    _wait_for_page_theme(page, "Task Stream", "dark")
    dark = _settled_pixels(page, "Task Stream")
    screenshot(page, "dark-task-stream")
    OUTPUT.mkdir(exist_ok=True)
    light.save(OUTPUT / "task-stream-frozen-light.png")
    dark.save(OUTPUT / "task-stream-frozen-dark.png")
    assert light.size == dark.size

    def background(image: Image.Image) -> tuple[int, int, int]:
        """The commonest grey: bars of one long task group can cover more of the plot than it."""
        colours = image.getcolors(image.width * image.height) or []
        greys = [(n, c) for n, c in colours if max(c) - min(c) < 24]  # type: ignore[arg-type]
        return max(greys, key=lambda pair: pair[0])[1]  # type: ignore[return-value]

    bg_light, bg_dark = background(light), background(dark)
    assert _luminance(bg_light) > 0.8 and _luminance(bg_dark) < 0.05, (bg_light, bg_dark)

    def same_data_colour(seen_light: tuple[int, ...], seen_dark: tuple[int, ...]) -> bool:
        """The same colour, or the same colour drawn translucent (alpha a) on the other background:
        then light - dark = (1 - a) * (bg_light - bg_dark) in every channel alike."""
        shares = [
            (lc - dc) / (bl - bd)
            for lc, dc, bl, bd in zip(seen_light, seen_dark, bg_light, bg_dark, strict=True)
        ]
        return max(shares) - min(shares) <= 0.04 and -0.03 <= min(shares) and max(shares) <= 1

    # Data pixels: saturated colours the same as the pixels above and below (a bar's top and bottom
    # edges blend with what is beside). Across a bar, a column may mix sub-pixel tasks and the
    # background: a mix that the translucency test below accepts only if the data kept its colour.
    width, height = light.size
    lp, dp = light.load(), dark.load()
    compared = same = 0
    for y in range(1, height - 1, 2):
        for x in range(1, width - 1, 2):
            r, g, b = lp[x, y]
            if max(r, g, b) - min(r, g, b) < 60:
                continue
            if lp[x, y - 1] != (r, g, b) or lp[x, y + 1] != (r, g, b):
                continue
            compared += 1
            same += same_data_colour((r, g, b), dp[x, y])
    print(f"data pixels compared: {compared}, same colour in dark: {same / max(compared, 1):.1%}")
    assert compared > 500, "too few task pixels to compare: is the sample work running?"
    assert same / compared > 0.97
    set_theme(page, "JupyterLab Light")


def test_dark_plot_text_and_legends_are_readable(browser, lab: Lab, dask_cluster: DaskCluster) -> None:
    """Titles, tick labels and legends reach WCAG AA in the dark theme; swatches stand out as in light."""
    source = lab.api("dashdock/api/sources", "POST", {"url": dask_cluster.dashboard})["id"]  # type: ignore[index]
    page = open_lab(browser, lab, "dark-text")
    name = "Fine Performance Metrics"
    _open(page, source, "/individual-fine-performance-metrics", name)
    # Its legends once the metrics have come (the sample work runs on the cluster).
    swatches_light = wait_until(lambda: pane_frame(page, name).evaluate(_SWATCHES), timeout=60)
    set_theme(page, "JupyterLab Dark")
    _wait_for_page_theme(page, name, "dark")
    frame = pane_frame(page, name)
    texts = frame.evaluate(_TEXT_ON_BACKGROUND)
    swatches_dark = frame.evaluate(_SWATCHES)
    screenshot(page, "dark-fine-performance-metrics")

    assert {what for what, _, _ in texts} >= {"title", "tick labels", "legend"}, texts
    ratios = [(what, contrast(text, on)) for what, text, on in texts]
    print("text contrast in dark:", sorted({f"{what} {ratio:.1f}:1" for what, ratio in ratios}))
    assert all(ratio >= 4.5 for _, ratio in ratios), ratios

    light_min = min(contrast(fill, on) for fill, on in swatches_light)
    dark_min = min(contrast(fill, on) for fill, on in swatches_dark)
    print(f"weakest legend swatch: light {light_min:.2f}:1, dark {dark_min:.2f}:1")
    assert swatches_dark and dark_min >= light_min

    # Back to light: the dashboard's own colours again, without a reload.
    set_theme(page, "JupyterLab Light")
    _wait_for_page_theme(page, name, "own")
    legends = frame.evaluate(
        "() => [...Bokeh.documents[0].all_models].filter(m => 'items' in m && 'label_text_color' in m)"
        ".map(m => m.background_fill_color)"
    )
    assert legends and all(color in ("#ffffff", "white") for color in legends), legends


def test_fine_performance_metrics_fills_its_pane(browser, lab: Lab, dask_cluster: DaskCluster) -> None:
    source = lab.api("dashdock/api/sources", "POST", {"url": dask_cluster.dashboard})["id"]  # type: ignore[index]
    page = open_lab(browser, lab, "fpm-size")
    name = "Fine Performance Metrics"
    _open(page, source, "/individual-fine-performance-metrics", name)
    frame = pane_frame(page, name)
    frame.wait_for_function(
        "() => [...Bokeh.documents[0].all_models].some(m => m.sizing_mode === 'stretch_both')"
    )
    frame_box = pane(page, name).locator("iframe[src]").bounding_box()
    assert frame_box is not None
    # The lowest canvas Bokeh drew: the figures' bottom edge, once Bokeh has laid them out again.
    lowest_canvas = """() => {
          let lowest = 0;
          const walk = root => {
            for (const el of root.querySelectorAll('*')) {
              if (el.tagName === 'CANVAS') lowest = Math.max(lowest, el.getBoundingClientRect().bottom);
              if (el.shadowRoot) walk(el.shadowRoot);
            }
          };
          walk(document);
          return lowest;
        }"""

    def used() -> float:
        return frame.evaluate(lowest_canvas) / frame_box["height"]

    try:
        wait_until(lambda: used() > 0.85, timeout=30)
    finally:
        print(f"Fine Performance Metrics uses {used():.0%} of its pane's height")
        screenshot(page, "fine-performance-metrics-size")
