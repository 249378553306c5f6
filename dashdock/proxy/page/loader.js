/*
 * dashdock's loader of a framed page's scripts (see deferral.py). The proxy leaves the scripts of a
 * page shown in a frame inert (type "dashdock/deferred") from its first BokehJS tag on; here they
 * run in document order once the page is parsed. BokehJS comes from the Lab, which fetched it once
 * in its own origin, where the browser's cache works (this page's opaque origin keeps none); any
 * file the Lab does not give is loaded from its URL, as the page named it.
 *
 * To the parent: {type: "dashdock:bokehjs", files: [{name, version}]}: public file names only.
 * From the parent, and nobody else: {type: "dashdock:bokehjs-pending"} at once (it is a Lab that
 * answers), then {type: "dashdock:bokehjs", name, version, source: Blob | null} per file.
 *
 * A spare page (spare.py) runs its BokehJS, then says {type: "dashdock:spare-ready", view} (its view
 * URL's path) to the parent,
 * and takes from the parent, once: {type: "dashdock:show", html, below}: a plot's page and its path
 * and query below this view URL.
 */
(() => {
  'use strict';

  const INERT = 'dashdock/deferred';
  const NAME = /^bokeh(-[a-z]+)?\.min\.js$/;
  const VERSION = /^[0-9a-f]{128}$/;
  const ACK_MS = 1000; // a parent that is not a dashdock Lab never answers
  const REPLY_MS = 60000; // a Lab that answered, fetching over a slow network

  /** The BokehJS file a tag links ({name, version, key}), or null. */
  function bokehFile(script) {
    const src = script.getAttribute('src');
    if (!src) {
      return null;
    }
    let url;
    try {
      url = new URL(src, document.baseURI);
    } catch {
      return null;
    }
    const name = url.pathname.split('/').pop();
    const version = url.searchParams.get('v') || '';
    if (!url.pathname.includes('/static/js/') || !NAME.test(name) || !VERSION.test(version)) {
      return null;
    }
    return { name, version, key: `${name}?v=${version}` };
  }

  /** The files the Lab gives for `files`: key -> Blob, or null for a file it has not. */
  function fromLab(files) {
    return new Promise(resolve => {
      const given = new Map();
      let timer;
      const finish = () => {
        window.removeEventListener('message', onMessage);
        window.clearTimeout(timer);
        resolve(given);
      };
      const onMessage = event => {
        const data = event.data;
        if (event.source !== window.parent || !data || typeof data !== 'object') {
          return;
        }
        if (data.type === 'dashdock:bokehjs-pending') {
          window.clearTimeout(timer);
          timer = window.setTimeout(finish, REPLY_MS);
        } else if (data.type === 'dashdock:bokehjs') {
          const key = `${data.name}?v=${data.version}`;
          if (files.some(file => file.key === key) && !given.has(key)) {
            given.set(key, data.source instanceof Blob ? data.source : null);
            if (given.size === files.length) {
              finish();
            }
          }
        }
      };
      window.addEventListener('message', onMessage);
      timer = window.setTimeout(finish, ACK_MS);
      const names = files.map(({ name, version }) => ({ name, version }));
      window.parent.postMessage({ type: 'dashdock:bokehjs', files: names }, '*');
    });
  }

  /** A live copy of an inert script: BokehJS from the Lab's Blob when it gave one. */
  function liveCopy(inert, sources) {
    const live = document.createElement('script');
    for (const attribute of inert.attributes) {
      if (attribute.name !== 'type') {
        live.setAttribute(attribute.name, attribute.value);
      }
    }
    live.nonce = inert.nonce; // the page's own policy may allow scripts by nonce
    const file = bokehFile(inert);
    const blob = file ? sources.get(file.key) : null;
    if (blob instanceof Blob) {
      // A blob: URL loads like any script (compiled off the main thread), from memory.
      live.src = URL.createObjectURL(blob);
    } else if (!live.hasAttribute('src')) {
      live.text = inert.text;
    }
    return live;
  }

  /** Put loading scripts in place of their inert ones: fetched at once, run in order. */
  function load(pairs) {
    return Promise.all(
      pairs.map(
        ([inert, live]) =>
          new Promise(resolve => {
            live.async = false;
            live.onload = live.onerror = () => {
              if (live.src.startsWith('blob:')) {
                URL.revokeObjectURL(live.src);
              }
              resolve();
            };
            inert.replaceWith(live);
          })
      )
    );
  }

  async function runDeferred() {
    const scripts = [...document.querySelectorAll(`script[type="${INERT}"]`)];
    const files = scripts.map(bokehFile).filter(file => file !== null);
    const framed = window.parent !== window;
    const sources = framed && files.length > 0 ? await fromLab(files) : new Map();
    let loading = [];
    for (const inert of scripts) {
      const live = liveCopy(inert, sources);
      if (live.hasAttribute('src')) {
        loading.push([inert, live]);
        continue;
      }
      // An inline script runs as it is inserted: the files before it must have run first.
      await load(loading);
      loading = [];
      inert.replaceWith(live);
    }
    await load(loading);
  }

  // -- The spare page (spare.py): BokehJS run ahead, the plot's page handed over later ---------

  const SPARE = '/.dashdock/spare';
  const CLASSIC = ['', 'text/javascript', 'application/javascript', 'application/x-javascript', 'text/ecmascript'];

  /**
   * Put the page `html` (the Lab fetched it from `below` this view) in place of this one and run
   * its scripts, BokehJS excepted (it ran here already). A page that needs other BokehJS, or none,
   * or runs modules, is loaded the usual way instead.
   */
  async function show(html, below, loaded) {
    const prefix = location.pathname.slice(0, -SPARE.length);
    const url = new URL(`${prefix}/${below}`, location.href);
    if (url.origin !== location.origin || !url.pathname.startsWith(`${prefix}/`)) {
      return;
    }
    const page = new DOMParser().parseFromString(html, 'text/html');
    let bokeh = false;
    let usable = true;
    for (const script of page.querySelectorAll('script')) {
      const file = bokehFile(script);
      const type = (script.getAttribute('type') || '').trim().toLowerCase();
      if (file) {
        bokeh = true;
        usable = usable && loaded.has(file.key);
        script.remove();
      } else if ((script.getAttribute('src') || '').includes('/.dashdock/page.js')) {
        script.remove(); // this script, running already
      } else if (CLASSIC.includes(type)) {
        script.setAttribute('type', INERT); // run below, in document order
      } else if (type === 'module') {
        usable = false;
      }
    }
    if (!bokeh || !usable) {
      location.replace(url.href);
      return;
    }
    // Relative URLs, Bokeh's websocket included, now resolve against the plot's page.
    history.replaceState(null, '', url.href);
    document.documentElement.lang = page.documentElement.lang;
    document.head.replaceChildren(...[...page.head.childNodes].map(node => document.importNode(node, true)));
    document.body.replaceWith(document.importNode(page.body, true));
    await runDeferred();
  }

  /** Run BokehJS, tell the Lab this spare is ready, and wait for the one page it hands over. */
  async function startSpare() {
    const keys = [...document.querySelectorAll(`script[type="${INERT}"]`)]
      .map(bokehFile)
      .filter(file => file !== null)
      .map(file => file.key);
    await runDeferred();
    if (!window.Bokeh) {
      return; // the Lab sees no ready spare, and loads its next pane the usual way
    }
    const loaded = new Set(keys);
    const onMessage = event => {
      const data = event.data;
      if (
        event.source !== window.parent ||
        !data ||
        data.type !== 'dashdock:show' ||
        typeof data.html !== 'string' ||
        typeof data.below !== 'string'
      ) {
        return;
      }
      window.removeEventListener('message', onMessage);
      show(data.html, data.below, loaded);
    };
    window.addEventListener('message', onMessage);
    // Its view URL, so the Lab can check that it is still valid (a server restarted meanwhile
    // has another key; a link expires) before it hands this spare a page.
    const view = location.pathname.slice(0, -SPARE.length);
    window.parent.postMessage({ type: 'dashdock:spare-ready', view }, '*');
  }

  const start = window.parent !== window && location.pathname.endsWith(SPARE) ? startSpare : runDeferred;
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start, { once: true });
  } else {
    start();
  }
})();
