import { describe, expect, it } from 'vitest';
import { ACTIONS } from '../src/core/access/actions.ts';
import { can, requirementsOf } from '../src/core/access/authorize.ts';
import type { Principal, Role, Scope } from '../src/core/auth/principal.ts';
import { refusalFor } from '../src/mcp/admit.ts';
import { allTools } from '../src/mcp/registry.ts';
import { surfaceKey, surfaceOf } from '../src/mcp/tool.ts';

const principal = (role: Role, scopes: Scope[], via: Principal['via'] = 'token'): Principal => ({
  workspaceId: 'w',
  slug: 'w',
  identityId: 'i',
  name: 'n',
  role,
  clientId: role.startsWith('client') ? 'c' : null,
  via,
  scopes: new Set(scopes),
  projectIds: null,
  tokenId: via === 'token' ? 't' : null,
  tokenKind: via === 'token' ? 'delegated' : null,
  sessionId: via === 'session' ? 's' : null,
  reauthAt: null,
  source: 'mcp',
  door: 'mcp',
});

const all: Scope[] = ['read', 'write', 'triage'];
const open = { readonly: false, toolsets: null };

describe('MCP tools perform core actions', () => {
  it('every tool names an action of the core action table', () => {
    for (const tool of allTools) expect(Object.keys(ACTIONS), tool.name).toContain(tool.action);
  });

  it('a tool changes data exactly when its action needs the write scope', () => {
    for (const tool of allTools) expect(tool.writes, tool.name).toBe(requirementsOf(tool.action).scope === 'write');
  });

  it('no tool performs a session-only action (a token can never perform one)', () => {
    for (const tool of allTools) {
      const r = requirementsOf(tool.action);
      expect(Boolean(r.session || r.reauth), tool.name).toBe(false);
    }
  });
});

describe('can(principal, action): what a credential can ever do, without a ticket', () => {
  it('answers as authorize would: scope, session, workspace users only, role alone', () => {
    expect(can(principal('member', all), 'tickets.create')).toBeNull();
    expect(can(principal('member', ['read']), 'tickets.create')).toMatchObject({ reason: 'missing_scope', details: { scope: 'write' } });
    expect(can(principal('owner', all), 'tokens.list')).toMatchObject({ reason: 'session_required' });
    expect(can(principal('owner', all, 'session'), 'tokens.list')).toBeNull();
    expect(can(principal('client', all), 'time.list')).toMatchObject({ reason: 'workspace_users_only' });
    expect(can(principal('member', all, 'session'), 'periods.list')).toMatchObject({ reason: 'admin_only' });
    expect(can(principal('admin', all, 'session'), 'periods.list')).toBeNull();
  });

  it('leaves the role to the ticket where the ticket decides (a member may archive some tickets, delete none without re-authentication)', () => {
    expect(can(principal('member', all, 'session'), 'time.reattribute')).toBeNull();
    expect(can(principal('member', all, 'session'), 'tickets.delete')).toBeNull();
  });

  it('checks every action of the table without throwing', () => {
    for (const action of Object.keys(ACTIONS) as (keyof typeof ACTIONS)[]) {
      expect(() => can(principal('client', []), action)).not.toThrow();
    }
  });
});

describe('tool availability follows the core', () => {
  it('the cause of a missing tool: the core reason in the tools vocabulary', () => {
    const logTime = allTools.find((t) => t.name === 'log_time')!;
    expect(refusalFor(logTime, surfaceOf(principal('client', all)), open)).toMatchObject({ cause: 'client_user' });
    expect(refusalFor(logTime, surfaceOf(principal('member', ['read'])), open)).toMatchObject({ cause: 'missing_scope', extra: { scope: 'write' } });
    expect(refusalFor(logTime, surfaceOf(principal('member', ['write'])), open)).toMatchObject({ cause: 'missing_scope', extra: { scope: 'read' } });
    expect(refusalFor(logTime, surfaceOf(principal('member', all)), { readonly: true, toolsets: null })).toMatchObject({ cause: 'readonly_connection' });
    expect(refusalFor(logTime, surfaceOf(principal('member', all)), open)).toBeNull();
  });

  it('tokens that differ in anything `can` reads never share a cached tool list', () => {
    const key = (p: Principal) => surfaceKey(surfaceOf(p));
    expect(key(principal('member', ['write']))).not.toBe(key(principal('member', ['read', 'write'])));
    expect(key(principal('member', all))).not.toBe(key(principal('admin', all)));
    expect(key(principal('member', all))).not.toBe(key(principal('member', all, 'session')));
  });
});
