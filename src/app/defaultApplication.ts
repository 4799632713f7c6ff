import { defineApplication } from './application.ts';
import { backplaneModules } from './backplaneModules.ts';

/** Backplane's modules alone: what this repository's `npm start` and tests run. */
export const backplaneApplication = defineApplication({ name: 'backplane', modules: backplaneModules });
