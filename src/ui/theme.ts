/**
 * Whether plots should be drawn dark: the one reading of Lab's theme (see ui/dnd.ts for ui/).
 */

import type { IThemeManager } from '@jupyterlab/apputils';

/**
 * Whether the current Lab theme is dark; false without a theme manager or before a theme loads.
 */
export function isDarkTheme(themeManager: IThemeManager | null): boolean {
  return !!themeManager?.theme && !themeManager.isLight(themeManager.theme);
}
