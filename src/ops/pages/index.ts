import type { OpsRoute } from '../route.ts';
import { billingPages } from './billing.ts';
import { jobPages } from './jobs.ts';
import { operatorPages } from './operators.ts';
import { otherPages } from './other.ts';
import { setupPages } from './setup-pages.ts';

/** Every page and action of the console, as console.ts mounts them (and the door walk, test/doors.test.ts, reads them). */
export const consoleRoutes: OpsRoute[] = [...jobPages, ...billingPages, ...otherPages, ...operatorPages, ...setupPages];
