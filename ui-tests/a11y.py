"""The accessibility checker of the browser tests: axe-core, run in the page the user sees.

axe-core is a devDependency (node_modules/axe-core); it is injected into the Lab page and asked
about one part of it. Proxied plots are not checked: they are Bokeh's pages, in sandboxed frames
axe cannot enter, and dashdock does not author them.
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page

AXE_SCRIPT = Path(__file__).resolve().parent.parent / "node_modules" / "axe-core" / "axe.min.js"

# What must never ship; "moderate" and "minor" findings are printed, not failed.
BLOCKING_IMPACTS = ("serious", "critical")


def axe_violations(page: Page, selector: str) -> list[dict[str, object]]:
    """Every axe-core violation inside the elements matching `selector`, with its impact and nodes."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=AXE_SCRIPT.read_text())
    assert page.locator(selector).count(), f"nothing matches {selector!r} to check"
    return page.evaluate(
        """async selector => {
            const result = await window.axe.run(
                { include: [selector] },
                { iframes: false, resultTypes: ['violations'] }
            );
            return result.violations.map(violation => ({
                id: violation.id,
                impact: violation.impact,
                help: violation.help,
                nodes: violation.nodes.map(node => node.target.join(' ') + ': ' + node.failureSummary)
            }));
        }""",
        selector,
    )


def assert_accessible(page: Page, selector: str) -> None:
    """Fail on a serious or critical axe-core violation in `selector`; print the lesser ones."""
    violations = axe_violations(page, selector)
    blocking = [v for v in violations if v["impact"] in BLOCKING_IMPACTS]
    for violation in violations:
        if violation not in blocking:
            print(f"axe ({violation['impact']}) in {selector}: {violation['help']}")
    assert not blocking, "\n".join(
        f"{v['impact']} {v['id']}: {v['help']}\n  " + "\n  ".join(v["nodes"])  # type: ignore[arg-type]
        for v in blocking
    )
