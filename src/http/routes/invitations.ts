import { z } from 'zod';
import { acceptInvitation, acceptInvitationFields, invitationPreviewSchema, previewInvitation } from '../../core/auth/invitation-accept.ts';
import { requestPasswordReset, requestResetInput, resetPasswordFields, resetPassword } from '../../core/auth/password-reset.ts';
import { sessionInfoSchema } from '../../core/auth/schema.ts';
import { clockOf } from '../../core/ctx.ts';
import { runPublicOp } from '../../core/operation.ts';
import { okSchema } from '../../core/response-schema.ts';
import type { AppContext, AppDeps } from '../context.ts';
import { defineRoute, opInput } from '../route-table.ts';
import { guardOf, setSessionCookie } from './session.ts';

const byToken = z.object({ token: z.string().describe('The secret of the emailed link.') });

const loginCtx = (deps: AppDeps, ctx: AppContext) => ({
  sql: deps.sql,
  now: clockOf(deps),
  ttlHours: deps.config.SESSION_TTL_HOURS,
  guard: guardOf(deps, ctx),
});

/**
 * The one-time links of emails (under /api/auth, issue 22): reading and accepting an invitation,
 * which starts a session as login does, and resetting a password. Public: the link's secret is the
 * credential; no principal exists before them, so they are public operations (runPublicOp) run with the
 * login's context.
 */
export const invitationRoutes = [
  defineRoute({
    method: 'GET',
    path: '/invitations/:token',
    action: 'public',
    publicOp: previewInvitation,
    input: { params: byToken },
    output: invitationPreviewSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await runPublicOp(previewInvitation, loginCtx(deps, ctx), params);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/invitations/:token/accept',
    action: 'public',
    publicOp: acceptInvitation,
    input: { params: byToken, body: acceptInvitationFields },
    output: sessionInfoSchema,
    handler: async ({ ctx, deps, params }) => {
      const { secret, expiresAt, info } = await runPublicOp(acceptInvitation, loginCtx(deps, ctx), opInput(ctx.request.body, params));
      setSessionCookie(deps, ctx, secret, expiresAt);
      ctx.body = info;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/password-reset',
    action: 'public',
    publicOp: requestPasswordReset,
    input: { body: requestResetInput },
    output: { 202: okSchema },
    handler: async ({ ctx, deps }) => {
      ctx.status = 202;
      ctx.body = await runPublicOp(requestPasswordReset, loginCtx(deps, ctx), ctx.request.body);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/password-reset/:token',
    action: 'public',
    publicOp: resetPassword,
    input: { params: byToken, body: resetPasswordFields },
    output: okSchema,
    handler: async ({ ctx, deps, params }) => {
      ctx.body = await runPublicOp(resetPassword, loginCtx(deps, ctx), opInput(ctx.request.body, params));
    },
  }),
];
