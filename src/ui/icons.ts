/**
 * dashdock's icon (see ui/dnd.ts for ui/).
 */

import { LabIcon } from '@jupyterlab/ui-components';

import dashdockSvg from '../../style/icons/dashdock.svg';

export const dashdockIcon = new LabIcon({
  name: 'dashdock:icon',
  svgstr: dashdockSvg
});
