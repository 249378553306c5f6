/**
 * The flags of every frame that shows a dashboard's page. They match the `sandbox` policy the
 * server sends with each proxied response: without `allow-same-origin` the page runs in an opaque
 * origin, so it can neither use the user's Jupyter session nor reach the Lab window.
 */
export const DASHBOARD_FRAME_SANDBOX = 'allow-scripts allow-popups allow-downloads';

/**
 * A sandboxed iframe for a proxied dashboard page; the caller sets its `src`.
 *
 * #### Notes
 * The Lab controls a page only from outside: pause, rate and hidden suspend are server-side state
 * of its relays, and the dark theme is a style of the frame element.
 */
export function createDashboardFrame(title: string): HTMLIFrameElement {
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', DASHBOARD_FRAME_SANDBOX);
  frame.title = title;
  frame.referrerPolicy = 'no-referrer';
  return frame;
}
