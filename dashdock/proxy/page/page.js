/*
 * dashdock's script in each dashboard page it shows (see __init__.py). It runs first in the page,
 * in the page's sandbox, and does three things:
 *
 * - Theme: the Lab (the parent frame, and nothing else) posts its colours; the script gives them
 *   to what Bokeh draws on canvas (backgrounds, axes, grids, titles, legends, neutral text) by
 *   setting those models' properties, and to Bokeh's DOM (tooltips, toolbars, widgets, tables) by
 *   a style sheet adopted by every shadow root. Data colours are never touched, so a task's colour
 *   means the same in every theme. Light colours restore what the dashboard set.
 * - Connection notices: in a Lab pane, dashdock shows the connection's state and reloads the page
 *   when the scheduler is back, so Bokeh's own "connection lost" toasts are turned off, and in any
 *   page Bokeh's retries, which a spent view link refuses.
 * - Size: a layout that keeps a fixed aspect (Fine Performance Metrics) fills its pane instead.
 *
 * What the parent posts: {type: "dashdock:theme", theme: null | {background, surface, legend,
 * legendText, text, muted, border, grid}}: the colours of a dark Lab theme, each #hex or rgb()/rgba(), or null for
 * the dashboard's own (light) colours. Anything else, or from anyone else, is ignored.
 */
(() => {
  'use strict';

  const framed = window.parent !== window;
  const ROLES = ['background', 'surface', 'legend', 'legendText', 'text', 'muted', 'border', 'grid'];
  const COLOR = /^(#[0-9a-f]{3,8}|rgba?\(\s*[\d.]+%?(\s*,\s*[\d.]+%?){2,3}\s*\))$/i;
  const REFRESH_MS = 1000;

  // -- DOM: one sheet in the document and in every shadow root Bokeh attaches -----------------

  const sheet = new CSSStyleSheet();
  const attachShadow = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function (init) {
    const root = attachShadow.call(this, init);
    root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
    return root;
  };
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];

  /** Bokeh's own theme variables (its base.css), then what its tables colour directly. */
  function themeCss(t) {
    return `
:host {
  --color: ${t.text}; --background-color: ${t.background}; --inverted-color: ${t.background};
  --hover-color: ${t.surface}; --surface-background-color: ${t.surface};
  --disabled-background-color: ${t.surface}; --muted-bg-color: ${t.surface};
  --panel-bg-color: ${t.surface}; --inactive-bg: ${t.surface};
  --border-color: ${t.border}; --outline-color: ${t.border}; --divider-color: ${t.grid};
  --shortcut-color: ${t.muted}; --icon-color: ${t.muted}; --disabled-color: ${t.muted};
  --placeholder-color: ${t.muted}; --muted-color: ${t.muted}; --inactive-fg: ${t.muted};
  color: ${t.text};
}
html, body { background: ${t.background}; color: ${t.text}; color-scheme: dark; }
.slick-header-columns, .slick-header-column, .slick-headerrow-column, .slick-row, .slick-cell,
.slick-row.odd, .slick-row.even, .grid-canvas, .slick-viewport {
  background: ${t.background}; color: ${t.text}; border-color: ${t.grid};
}
.slick-row:hover, .slick-row.active { background: ${t.surface}; }
input, select, textarea { background: ${t.surface}; color: ${t.text}; }
`;
  }

  // -- Canvas: model properties, with what the dashboard set kept to restore ------------------

  const original = new WeakMap(); // model -> Map(property -> the dashboard's value)

  function set(model, property, value) {
    if (!(property in model)) {
      return;
    }
    let saved = original.get(model);
    if (!saved) {
      saved = new Map();
      original.set(model, saved);
    }
    if (!saved.has(property)) {
      saved.set(property, model[property]);
    }
    if (JSON.stringify(model[property]) !== JSON.stringify(value)) {
      model[property] = value;
    }
  }

  /** Set `property` only where the dashboard draws it (null means "not drawn"). */
  function setDrawn(model, property, value) {
    const saved = original.get(model);
    const dashboards = saved && saved.has(property) ? saved.get(property) : model[property];
    if (property in model && dashboards != null) {
      set(model, property, value);
    }
  }

  function restore(model) {
    const saved = original.get(model);
    if (!saved) {
      return;
    }
    for (const [property, value] of saved) {
      if (JSON.stringify(model[property]) !== JSON.stringify(value)) {
        model[property] = value;
      }
    }
    original.delete(model);
  }

  const probe = document.createElement('canvas').getContext('2d');

  /** Black, greys and near-black: colours that stand for "text", not for data. */
  function isNeutralDark(color) {
    if (typeof color !== 'string') {
      return false;
    }
    probe.fillStyle = '#010203'; // a sentinel: an unparsable colour leaves it
    probe.fillStyle = color;
    const hex = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(probe.fillStyle);
    if (!hex || probe.fillStyle === '#010203') {
      return false;
    }
    const [r, g, b] = hex.slice(1).map(part => parseInt(part, 16));
    return Math.max(r, g, b) - Math.min(r, g, b) < 24 && Math.max(r, g, b) < 128;
  }

  /** A text colour: a plain colour (annotations) or a value spec (the Text glyph). */
  function themeTextColor(model, t) {
    const current = original.get(model)?.get('text_color') ?? model.text_color;
    if (isNeutralDark(current)) {
      set(model, 'text_color', t.text);
    } else if (current && typeof current === 'object' && isNeutralDark(current.value)) {
      set(model, 'text_color', { value: t.text });
    }
  }

  function themeModel(model, t) {
    if ('major_label_text_color' in model) {
      // Axes and colour bars.
      for (const line of ['axis_line_color', 'major_tick_line_color', 'minor_tick_line_color']) {
        setDrawn(model, line, t.border);
      }
      for (const text of ['major_label_text_color', 'axis_label_text_color', 'title_text_color']) {
        setDrawn(model, text, t.text);
      }
      setDrawn(model, 'background_fill_color', t.background);
    } else if ('grid_line_color' in model) {
      setDrawn(model, 'grid_line_color', t.grid);
      setDrawn(model, 'minor_grid_line_color', t.grid);
    } else if ('label_text_color' in model && 'items' in model) {
      // Legends: a mid-grey surface of their own. Swatches span every lightness (erred is
      // black, viridis runs from near black to yellow); on mid-grey the weakest stands out more
      // than yellow does on Dask's white, which no dark background achieves.
      set(model, 'background_fill_color', t.legend);
      set(model, 'background_fill_alpha', 1);
      setDrawn(model, 'border_line_color', t.border);
      set(model, 'label_text_color', t.legendText);
      setDrawn(model, 'title_text_color', t.legendText);
      setDrawn(model, 'inactive_fill_color', t.surface);
    } else if ('border_fill_color' in model && 'renderers' in model) {
      // Plots (figures).
      setDrawn(model, 'background_fill_color', t.background);
      setDrawn(model, 'border_fill_color', t.background);
      setDrawn(model, 'outline_line_color', t.border);
    } else if ('text_color' in model) {
      // Titles, labels and the Text glyph: neutral text follows the theme, coloured text is data.
      themeTextColor(model, t);
    }
  }

  /** Layouts that keep a fixed aspect leave most of a pane empty: let them fill it. */
  function fillPane(model) {
    if (model.sizing_mode === 'scale_both' || model.sizing_mode === 'scale_width') {
      model.sizing_mode = 'stretch_both';
    }
    const children = model.children;
    if (
      model.sizing_mode === 'stretch_width' &&
      Array.isArray(children) &&
      children.some(child => child && child.sizing_mode === 'stretch_both')
    ) {
      model.sizing_mode = 'stretch_both';
    }
  }

  // -- Wiring ------------------------------------------------------------------------------------

  let theme = null;

  function documents() {
    const bokeh = window.Bokeh;
    return bokeh && Array.isArray(bokeh.documents) ? bokeh.documents : [];
  }

  function apply() {
    for (const doc of documents()) {
      if (framed && doc.config && doc.config.notify_connection_status) {
        // A change for this page only: synced, the dashboard's Bokeh server would refuse it as
        // an unknown model and log the error for every pane opened.
        doc.config.setv({ notify_connection_status: false }, { sync: false });
      }
      if (doc.config && doc.config.reconnect_session) {
        // The page's view link served its one websocket: the server refuses Bokeh's retries after
        // a drop (and logs each). A pane reloads the page when the scheduler is back; a tab, when
        // the user reloads it.
        doc.config.setv({ reconnect_session: false }, { sync: false });
      }
      for (const model of doc.all_models) {
        if (theme) {
          themeModel(model, theme);
        } else {
          restore(model);
        }
        // A hidden pane has no size: Bokeh would lay the page out at zero and stay there.
        if (framed && window.innerHeight > 0) {
          fillPane(model);
        }
      }
    }
  }

  function parseTheme(data) {
    if (!data || data.type !== 'dashdock:theme') {
      return undefined;
    }
    if (data.theme === null) {
      return null;
    }
    const colors = {};
    for (const role of ROLES) {
      const value = data.theme && data.theme[role];
      if (typeof value !== 'string' || value.length > 64 || !COLOR.test(value.trim())) {
        return undefined;
      }
      colors[role] = value.trim();
    }
    return colors;
  }

  window.addEventListener('message', event => {
    if (!framed || event.source !== window.parent) {
      return; // only the Lab that shows this page may theme it
    }
    const next = parseTheme(event.data);
    if (next === undefined) {
      return;
    }
    theme = next;
    sheet.replaceSync(theme ? themeCss(theme) : '');
    document.documentElement.dataset.dashdockTheme = theme ? 'dark' : 'own';
    apply();
  });

  // Documents arrive after the websocket connects, and Dask adds models as a run goes on.
  window.setInterval(apply, REFRESH_MS);
})();
