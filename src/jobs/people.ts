import type { Task } from 'graphile-worker';
import { sendResetEmail } from '../core/auth/password-reset-email.ts';
import { invitationMailJob, resetMailJob } from '../core/jobs/catalog.ts';
import { sendInvitationEmail } from '../core/people/invitation-email.ts';
import { jobTask, type JobServices } from './declared.ts';

/** The emails of people's one-time links (issue 22): each job calls one core function with its checked payload. */
export function peopleTasks(services: JobServices) {
  return {
    invitationMail: jobTask(invitationMailJob, services, sendInvitationEmail),
    resetMail: jobTask(resetMailJob, services, sendResetEmail),
  } satisfies Record<string, Task>;
}
