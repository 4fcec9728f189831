import { z } from 'zod';
import { dateTimeOut, describing, uuidOut } from '../response-schema.ts';
import { roles, scopes, type Role, type Scope } from './principal.ts';

/** Who a browser session is and where they may go: the body of login, GET /api/auth/session and an accepted invitation. */
export interface SessionInfo {
  identityId: string;
  name: string;
  email: string | null;
  workspaces: { slug: string; name: string; role: Role }[];
  csrfToken: string;
}

/** Response schemas of the browser session (/api/auth) and API tokens (/tokens). */

export const sessionInfoSchema = describing<SessionInfo>()(
  z
    .object({
      identityId: uuidOut,
      name: z.string(),
      email: z.string().nullable(),
      workspaces: z.array(z.object({ slug: z.string(), name: z.string(), role: z.enum(roles) })).describe('The workspaces the person belongs to, by slug.'),
      csrfToken: z.string().describe('Send it in `X-CSRF-Token` with every write made with this session.'),
    })
    .meta({ id: 'SessionInfo' }),
);

export const reauthSchema = describing<{ ok: true; reauthAt: string }>()(
  z.object({ ok: z.literal(true), reauthAt: dateTimeOut.describe('The ten-minute re-authentication window opens here.') }).meta({ id: 'Reauth' }),
);

/** An API token as GET /tokens lists it (never its secret). */
export interface TokenView {
  id: string;
  name: string;
  scopes: Scope[];
  projectIds: string[] | null;
  kind: 'delegated' | 'agent';
  actsAs: string;
  hint: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
}

export const tokenViewSchema = describing<TokenView>()(
  z
    .object({
      id: uuidOut,
      name: z.string(),
      scopes: z.array(z.enum(scopes)),
      projectIds: z.array(uuidOut).nullable().describe('The projects the token is limited to; null: every project its person sees.'),
      kind: z.enum(['delegated', 'agent']),
      actsAs: uuidOut.describe('The person (or agent) the token acts as.'),
      hint: z.string().describe('The last characters of the secret, to tell tokens apart.'),
      expiresAt: dateTimeOut.nullable(),
      revokedAt: dateTimeOut.nullable(),
      lastUsedAt: dateTimeOut.nullable(),
      createdAt: dateTimeOut,
    })
    .meta({ id: 'Token' }),
);

export const tokenListSchema = describing<{ tokens: TokenView[] }>()(z.object({ tokens: z.array(tokenViewSchema) }).meta({ id: 'TokenList' }));

export const createdTokenSchema = describing<TokenView & { token: string }>()(
  tokenViewSchema.extend({ token: z.string().describe('The secret, shown this once: `Authorization: Bearer <token>`.') }).meta({ id: 'CreatedToken' }),
);
