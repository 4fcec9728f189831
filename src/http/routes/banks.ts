import type { RouteDef } from '../route-table.ts';

/** Routes of issue 11 (filled in by the billing work). */
export const banksRoutes: RouteDef[] = [];
