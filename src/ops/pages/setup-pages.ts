import type { OpsRoute } from '../route.ts';
import { setupCategoryPages } from './setup-categories.ts';
import { setupClientPages } from './setup-clients.ts';
import { setupMemberPages } from './setup-member.ts';
import { setupPeoplePages } from './setup-people.ts';
import { setupPeriodPages } from './setup-periods.ts';
import { setupProjectPages } from './setup-projects.ts';
import { setupRatePages } from './setup-rates.ts';
import { setupSettingsPages } from './setup-settings.ts';
import { setupWorkflowPages } from './setup-workflow.ts';

/** The Setup section (issue 22): Owners and Admins set the workspace up, every form one operation of the core. */
export const setupPages: OpsRoute[] = [
  ...setupPeoplePages,
  ...setupMemberPages,
  ...setupClientPages,
  ...setupProjectPages,
  ...setupCategoryPages,
  ...setupRatePages,
  ...setupPeriodPages,
  ...setupWorkflowPages,
  ...setupSettingsPages,
];
