"""The package layout is the architecture: these tests keep it so.

- No import cycles among dashdock's modules (every import counts, lazy and type-only ones too).
- Each Python concern imports only what its layer may (the table below, as docs/architecture.md says),
  and so does each frontend directory (src/index.ts says the rule).
- docs/architecture.md's module map lists every module of dashdock/ and src/, and nothing else.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "dashdock"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

BASE = {
    "dashdock.errors",
    "dashdock.ids",
    "dashdock.targets",
    "dashdock.upstream",
    "dashdock.http",
    "dashdock.sqlite",
}
# What kernels and servers agree on (and what a cluster host runs on its scheduler).
KERNEL_CONTRACT = {
    "dashdock.kernel.protocol",
    "dashdock.kernel.files",
    "dashdock.kernel.fine_metrics",
    "dashdock.kernel.plot_state",
    "dashdock.kernel.state_plugin",
}

# What each part may import of dashdock (prefixes), besides its own modules.
MAY_IMPORT: dict[str, set[str]] = {
    "dashdock.kernel": set(),  # runs in kernels, possibly loaded by path without the rest
    "dashdock._preload": {"dashdock.kernel"},
    "dashdock.errors": set(),
    "dashdock.sqlite": {"dashdock.errors"},
    "dashdock.ids": set(),
    "dashdock.targets": set(),
    "dashdock.upstream": {"dashdock.errors", "dashdock.targets"},
    "dashdock.http": {"dashdock.errors", "dashdock.ids"},
    "dashdock.sources": BASE | {"dashdock.kernel.files"},
    "dashdock.panes": BASE,
    "dashdock.clusters": BASE | KERNEL_CONTRACT | {"dashdock.sources"},
    "dashdock.notebook": BASE | KERNEL_CONTRACT | {"dashdock.sources"},
    "dashdock.history": BASE
    | KERNEL_CONTRACT
    | {"dashdock.sources", "dashdock.clusters", "dashdock.live.plots"},
    # The watcher process wires its three consumers around its one connection per scheduler.
    "dashdock.watcher": BASE
    | KERNEL_CONTRACT
    | {"dashdock.history", "dashdock.alerts.detection", "dashdock.live"},
    # Live drawing reads only the records' shapes of the rest: it runs in the watcher process.
    "dashdock.live": BASE | {"dashdock.history.model"},
    "dashdock.alerts": BASE | {"dashdock.history", "dashdock.sources"},
    "dashdock.diagnosis": BASE | {"dashdock.history"},
    "dashdock.proxy.websocket": BASE | {"dashdock.panes.state"},
    "dashdock.proxy.bokehjs": {"dashdock.kernel.files"},
    "dashdock.proxy.page": set(),
    "dashdock.proxy": BASE | KERNEL_CONTRACT | {"dashdock.sources", "dashdock.panes"},
    "dashdock.app": {"dashdock"},  # wires everything
    "dashdock": {
        "dashdock.app",
        "dashdock.kernel.show",
        "dashdock.history.export",
        "dashdock.diagnosis.notebook",
        "dashdock._version",
    },
    "dashdock._version": set(),
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in PACKAGE.rglob("*.py") if "labextension" not in path.parts}


def imports_of(name: str, path: Path) -> set[str]:
    """The dashdock modules ``name`` imports, resolved (relative ones too), wherever the import is."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    known = modules()
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from dashdock.x import y``: y may be a module of x, or a name in x.
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names
            ]
        else:
            continue
        found.update(target for target in targets if target in known and target != name)
    return found


def graph() -> dict[str, set[str]]:
    return {name: imports_of(name, path) for name, path in modules().items()}


def part_of(name: str) -> str:
    return max((part for part in MAY_IMPORT if name == part or name.startswith(part + ".")), key=len)


def test_the_package_has_no_import_cycle() -> None:
    edges = graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for imported in sorted(edges[name]):
            if state.get(imported) == 1:
                cycle = [*path[path.index(imported) :], imported]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if imported not in state:
                visit(imported)
        path.pop()
        state[name] = 2

    for name in sorted(edges):
        if name not in state:
            visit(name)


def test_each_part_imports_only_what_its_layer_may() -> None:
    wrong = []
    for name, imported in graph().items():
        part = part_of(name)
        allowed = MAY_IMPORT[part]
        for target in sorted(imported):
            own = target == part or target.startswith(part + ".")
            if part == "dashdock" and name != "dashdock":
                own = False
            if not own and not any(target == a or target.startswith(a + ".") for a in allowed):
                wrong.append(f"{name} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_the_checks_see_a_cycle_and_a_layer_breach() -> None:
    # The walk resolves relative, lazy and type-only imports; a known edge proves it reads them.
    edges = graph()
    assert "dashdock.kernel.protocol" in edges["dashdock.kernel.hooks"]  # relative
    assert "dashdock.app" in edges["dashdock"]  # lazy and TYPE_CHECKING
    assert "dashdock.proxy.websocket.relay" in edges["dashdock.proxy.relay_handler"]
    assert part_of("dashdock.proxy.websocket.relay") == "dashdock.proxy.websocket"


def documented_modules() -> set[str]:
    """Paths in the module map: lines of the form ``- `path` ...`` under '## Module map'."""
    text = ARCHITECTURE.read_text()
    section = text.split("## Module map", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\s*[-|]\s*`((?:dashdock|src)/[^`]+\.(?:py|ts))`", section, re.M))


def only_a_docstring(path: Path) -> bool:
    """A package's ``__init__`` that only says what the package owns: the map lists its modules."""
    body = ast.parse(path.read_text()).body
    return len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)


def test_the_module_map_lists_every_module() -> None:
    actual = {
        str(path.relative_to(ROOT))
        for path in [*PACKAGE.rglob("*.py"), *(ROOT / "src").rglob("*.ts")]
        if "labextension" not in path.parts
        and not path.name.endswith(".d.ts")
        and not (path.name == "__init__.py" and only_a_docstring(path))
    }
    listed = documented_modules()
    assert not actual - listed, f"modules missing from docs/architecture.md: {sorted(actual - listed)}"
    assert not listed - actual, (
        f"docs/architecture.md lists modules that do not exist: {sorted(listed - actual)}"
    )


# What each frontend directory may import of src/ besides itself (src/index.ts states the rule).
TS_MAY_IMPORT = {
    "api": set(),
    "ui": set(),
    "sources": {"api", "ui", "tokens"},
    "clusters": {"api", "ui", "tokens"},
    "panes": {"api", "ui", "tokens"},
    "notebook": {"api", "ui", "tokens"},
    "history": {"api", "ui", "tokens"},
    "alerts": {"api", "ui", "tokens"},
    "tokens": {"api"},  # re-exports the wire types
}
TS_IMPORT_RE = re.compile(r"""(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+'(\.[^']*)'""", re.S)


def ts_part(path: Path) -> str:
    relative = path.relative_to(ROOT / "src")
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def test_each_frontend_directory_imports_only_what_it_may() -> None:
    src = ROOT / "src"
    wrong = []
    checked = 0
    for path in src.rglob("*.ts"):
        part = ts_part(path)
        if part not in TS_MAY_IMPORT:
            continue  # plugins/ and index.ts wire everything
        for specifier in TS_IMPORT_RE.findall(path.read_text()):
            checked += 1
            resolved = (path.parent / specifier).resolve()
            if not resolved.is_relative_to(src):
                continue  # style/ assets
            target = ts_part(resolved.with_suffix(".ts"))
            if target != part and target not in TS_MAY_IMPORT[part]:
                wrong.append(f"{path.relative_to(ROOT)} imports {specifier}")
    assert checked > 20, "the import pattern no longer finds the frontend's imports"
    assert not wrong, "\n".join(wrong)


def test_no_handlers_module_imports_targets_or_upstream() -> None:
    # Handlers parse, call one service and answer; dashboards are reached (targets checked,
    # upstream asked) below them. Those that still do it themselves are listed until moved.
    not_yet: set[str] = set()
    lower = ("dashdock.targets", "dashdock.upstream")
    breaching = set()
    for name, path in modules().items():
        if name.rpartition(".")[2] != "handlers":
            continue
        if any(target.startswith(lower) for target in imports_of(name, path)):
            breaching.add(name)
    assert "dashdock.clusters.handlers" in modules(), "the rule no longer sees the handlers modules"
    assert not breaching - not_yet, f"handlers importing targets or upstream: {sorted(breaching - not_yet)}"
    assert not not_yet - breaching, f"no longer breaching, drop from not_yet: {sorted(not_yet - breaching)}"


# What starts or speaks to clusters: handlers reach it only through the facade (clusters/facade.py).
CLUSTER_PROVIDERS = (
    "dashdock.clusters.manager",
    "dashdock.clusters.gateway",
    "dashdock.clusters.gateway_client",
    "dashdock.clusters.host",
    "dashdock.clusters.setup",
)


def test_handlers_call_a_facade_and_never_import_a_provider() -> None:
    edges = graph()
    assert "dashdock.clusters.facade" in edges["dashdock.clusters.handlers"], "the rule no longer sees it"
    wrong = [
        f"{name} imports {target}"
        for name, imported in edges.items()
        if name.rpartition(".")[2] == "handlers"
        for target in sorted(imported)
        if target.startswith(CLUSTER_PROVIDERS)
    ]
    assert not wrong, "\n".join(wrong)


def test_the_app_builds_no_concern_itself() -> None:
    # Each concern builds itself from the traits (clusters/setup.py, history/settings.py,
    # history/recordable.py, notebook/environment.py): app.py has no builder of its own.
    tree = ast.parse((PACKAGE / "app.py").read_text())
    app = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "DashdockApp")
    methods = [node.name for node in app.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
    wiring = {
        "initialize_settings",
        "initialize_handlers",
        "_start_jupyter_server_extension",
        "stop_extension",
    }
    builders = [name for name in methods if name not in wiring and not name.startswith("_default_")]
    assert not builders, f"app.py builds what a concern should: {builders}"


HISTORY_SERVER_SIDE = ("service", "handlers", "views", "pages", "pages_overview", "report")


WATCHER_PROCESS = ("dashdock.watcher", "dashdock.live")


def test_the_server_and_the_watcher_process_import_nothing_of_each_other() -> None:
    # The server starts the watcher by name and speaks to it over pipes; live drawing runs in the
    # watcher. They share the records' shapes, the store and the drawn plots' contract (live/plots.py).
    wrong = []
    for name, imported in graph().items():
        watcher = name.startswith(WATCHER_PROCESS)
        for target in imported:
            if not watcher and target.startswith(WATCHER_PROCESS) and target != "dashdock.live.plots":
                wrong.append(f"{name} imports {target} (the service starts it by name only)")
            if watcher and target.removeprefix("dashdock.history.") in HISTORY_SERVER_SIDE:
                wrong.append(f"{name} imports {target}")
    assert "dashdock.live.plot_server" in graph(), "the rule no longer sees the watcher process"
    assert not wrong, "\n".join(wrong)


MAX_LINES = 400
ONE_UNIT = "One unit:"  # within a file's first lines: why a longer file is not split


def test_no_source_file_is_over_400_lines_without_saying_why() -> None:
    files = [*PACKAGE.rglob("*.py"), *(ROOT / "src").rglob("*.ts")]
    files = [path for path in files if "labextension" not in path.parts]
    long, unexplained = [], []
    for path in files:
        lines = path.read_text().splitlines()
        if len(lines) > MAX_LINES:
            long.append(f"{path.relative_to(ROOT)} ({len(lines)})")
            if not any(ONE_UNIT in line for line in lines[:3]):
                unexplained.append(str(path.relative_to(ROOT)))
    print("longer than", MAX_LINES, "lines, as one unit:", ", ".join(long) or "none")
    assert len(files) > 100, "the rule no longer sees the sources"
    assert not unexplained, f"over {MAX_LINES} lines with no '{ONE_UNIT}' reason at the top: {unexplained}"


PLUGIN_MAX_LINES = 80


def test_every_frontend_plugin_is_under_80_lines() -> None:
    # Plugins only wire: what they would do at length belongs to the feature's directory.
    plugins = sorted((ROOT / "src" / "plugins").glob("*.ts"))
    assert len(plugins) >= 7, "the rule no longer sees src/plugins/"
    long = [
        f"{path.relative_to(ROOT)} ({count})"
        for path in plugins
        if (count := len(path.read_text().splitlines())) >= PLUGIN_MAX_LINES
    ]
    assert not long, f"plugins of {PLUGIN_MAX_LINES} lines or more: {long}"


def test_the_app_only_wires() -> None:
    # app.py declares traits and calls what each concern offers: it builds no concern's state
    # itself, so its settings step stays short and reads like the list of parts.
    tree = ast.parse((PACKAGE / "app.py").read_text())
    app = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "DashdockApp")
    methods = {
        node.name: node for node in app.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    settings = methods["initialize_settings"]
    length = (settings.end_lineno or 0) - settings.lineno + 1
    assert length < 50, f"initialize_settings is {length} lines"
    # What a concern computes is asked of it, not done here: no loop, no comprehension over its data.
    loops = [
        f"{name}:{node.lineno}"
        for name, method in methods.items()
        for node in ast.walk(method)
        if isinstance(
            node, ast.For | ast.While | ast.ListComp | ast.DictComp | ast.SetComp | ast.GeneratorExp
        )
    ]
    assert not loops, f"app.py computes instead of wiring: {loops}"
