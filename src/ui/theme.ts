/**
 * Lab's theme as dashboard pages need it: whether it is dark, and its colours (see ui/dnd.ts for ui/).
 */

import type { IThemeManager } from '@jupyterlab/apputils';

/**
 * Whether the current Lab theme is dark; false without a theme manager or before a theme loads.
 */
export function isDarkTheme(themeManager: IThemeManager | null): boolean {
  return !!themeManager?.theme && !themeManager.isLight(themeManager.theme);
}

/**
 * The colours a dashboard page is drawn with in a dark theme (what dashdock's page script takes:
 * dashdock/proxy/page/page.js). Data colours are not among them: they keep their meaning.
 */
export interface IPageTheme {
  /** Plot and page background. */
  background: string;
  /** Tooltips, inputs, hovered rows: a surface that sets them off from the plot. */
  surface: string;
  /** Legends: mid-grey, so swatches of every lightness stand out (see page.js). */
  legend: string;
  /** Legend labels: readable on `legend`. */
  legendText: string;
  /** Titles, labels, ticks' text. */
  text: string;
  /** Secondary text and icons. */
  muted: string;
  /** Axes, outlines. */
  border: string;
  /** Grid lines, dividers. */
  grid: string;
}

/** Which Lab variable gives each colour of a page. */
const PAGE_THEME_VARIABLES: Record<keyof IPageTheme, string> = {
  background: '--jp-layout-color1',
  surface: '--jp-layout-color2',
  legend: '--jp-layout-color4',
  legendText: '--jp-ui-font-color0',
  text: '--jp-ui-font-color1',
  muted: '--jp-ui-font-color2',
  border: '--jp-border-color1',
  grid: '--jp-border-color2'
};

/**
 * The current theme's page colours, resolved from Lab's CSS variables on `node` to #hex or
 * rgba() (the only forms the page script accepts).
 */
export function pageTheme(node: HTMLElement): IPageTheme {
  const style = getComputedStyle(node);
  const canvas = document.createElement('canvas').getContext('2d');
  const resolve = (variable: string): string => {
    const value = style.getPropertyValue(variable).trim();
    if (!canvas) {
      return value;
    }
    canvas.fillStyle = '#000000'; // what an unparsable value leaves
    canvas.fillStyle = value;
    return String(canvas.fillStyle);
  };
  const entries = Object.entries(PAGE_THEME_VARIABLES).map(
    ([role, variable]) => [role, resolve(variable)] as const
  );
  return Object.fromEntries(entries) as unknown as IPageTheme;
}
