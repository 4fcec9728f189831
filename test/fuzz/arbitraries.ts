import { randomUUID } from 'node:crypto';
import { deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';

/**
 * Generators for hostile and valid request parts. Nothing here knows a route: path parameters
 * are filled by name, bodies and queries draw from every field and parameter name the API uses,
 * so a new route is fuzzed without new code.
 */

export interface Pools {
  /** Workspace slugs: the fuzz's own and a second workspace's (tenancy). */
  slugs: string[];
  /** Ticket references that exist (human ids and uuids). */
  refs: string[];
  /** Ids of records that exist: tickets, comments, entries, links, people, projects, states... */
  ids: string[];
  /** Values that pass validation for common fields (dates, audiences, kinds). */
  today: string;
}

const HOSTILE_STRINGS = [
  '',
  ' ',
  'a\u0000b',
  '\u0000',
  'x\ud800y',
  '\udfff',
  '\ud83d',
  "'; drop table tickets; --",
  "' or '1'='1",
  '1; select pg_sleep(0)',
  '$1',
  '\\',
  '%',
  '_',
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  'javascript:alert(1)',
  '{{7*7}}',
  '${7*7}',
  '../../../../etc/passwd',
  'NaN',
  'Infinity',
  '-Infinity',
  '-0',
  '1e309',
  '0x10',
  '9'.repeat(40),
  '-1',
  '1.5',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  '0000-01-01',
  '1899-12-31',
  '1900-01-01',
  '9999-12-31',
  '10000-01-01',
  '-001-01-01',
  '2024-02-30',
  '2024-13-01',
  '2024-1-1',
  '24:00',
  '23:59:60',
  '99:99',
  'me',
  'none',
  'inbox',
  'bank:',
  'bank:not-a-uuid',
  'INBOX-0',
  'X-99999999999999999999',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
  '\u202eevil',
  '\ufeff',
  '😀'.repeat(60),
  'é'.repeat(201),
  'A'.repeat(61),
  'A'.repeat(201),
  'A'.repeat(501),
  'A'.repeat(10_001),
  'A'.repeat(50_001),
];

const HOSTILE_NUMBERS = [0, -1, 1, 0.5, -0.5, 2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 2, -(2 ** 63), 1e308, -1e308, Number.MIN_VALUE, 1441, 10_081, 10_000_001];

export const hostileString = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
);

/** A value for any field: a known-good id or value, or something hostile of any JSON type. */
export function fieldValue(pools: Pools): fc.Arbitrary<unknown> {
  const scalar = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...pools.ids, ...pools.refs) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        pools.today,
        'client',
        'internal',
        'relates',
        'blocks',
        'duplicates',
        'paid',
        'free',
        'period',
        'on_close',
        'read',
        'write',
        'triage',
        'UTC',
        'acme/web',
        'https://github.com/acme/web/pull/1',
        'abcdef1',
        'Title',
      ),
    },
    { weight: 4, arbitrary: hostileString },
    { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_NUMBERS) },
    { weight: 1, arbitrary: fc.integer() },
    { weight: 1, arbitrary: fc.boolean() },
    { weight: 1, arbitrary: fc.constant(null) },
  );
  return fc.oneof(
    { weight: 6, arbitrary: scalar },
    { weight: 1, arbitrary: fc.array(scalar, { maxLength: 25 }) },
    { weight: 1, arbitrary: fc.dictionary(fc.constantFrom('id', 'name', '__proto__', 'constructor', 'a'), scalar, { maxKeys: 3 }) },
  );
}

/** Every body field name the API and the MCP transport read, plus prototype-pollution keys. */
export const FIELDS = [
  'projectId',
  'title',
  'description',
  'kindId',
  'stateId',
  'priorityId',
  'assigneeId',
  'billingClientId',
  'labelIds',
  'startDate',
  'dueDate',
  'estimateMinutes',
  'parentId',
  'billingPolicy',
  'billingMode',
  'billingDescription',
  'confirmReset',
  'archived',
  'reason',
  'targetId',
  'kind',
  'repo',
  'url',
  'sha',
  'pr',
  'identityIds',
  'audience',
  'mentions',
  'body',
  'ticketId',
  'spentOn',
  'startedAt',
  'minutes',
  'note',
  'billable',
  'categoryId',
  'correctsEntryId',
  'name',
  'scopes',
  'projectIds',
  'expiresAt',
  'agentId',
  'timezone',
  'weeklyTargetMinutes',
  'periodStart',
  'identityId',
  'granted',
  'email',
  'password',
  'jsonrpc',
  'method',
  'params',
  'id',
  '__proto__',
  'constructor',
  'prototype',
];

export const QUERY_KEYS = [
  'projectId',
  'queue',
  'stateIds',
  'kindIds',
  'labelIds',
  'priorityIds',
  'stateCategory',
  'assigneeId',
  'reporterId',
  'viewerId',
  'billingClientId',
  'billingPolicy',
  'due',
  'q',
  'archived',
  'cursor',
  'limit',
  'from',
  'to',
  'userId',
  'ticketId',
  'after',
  'clientId',
  'runId',
  'toolsets',
  'readonly',
  '__proto__',
];

export type Body = { kind: 'none' } | { kind: 'json'; value: unknown } | { kind: 'raw'; text: string; label: string };

function deep(depth: number, open: string, close: string): string {
  return open.repeat(depth) + close.repeat(depth);
}

export function body(pools: Pools): fc.Arbitrary<Body> {
  const value = fieldValue(pools);
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant<Body>({ kind: 'none' }) },
    { weight: 10, arbitrary: fc.dictionary(fc.constantFrom(...FIELDS), value, { maxKeys: 6 }).map<Body>((v) => ({ kind: 'json', value: v })) },
    { weight: 2, arbitrary: value.map<Body>((v) => ({ kind: 'json', value: v })) },
    {
      weight: 2,
      arbitrary: fc.constantFrom<Body>(
        { kind: 'raw', text: '{', label: 'truncated JSON' },
        { kind: 'raw', text: '{"title":"a","title":"b"}', label: 'duplicate keys' },
        { kind: 'raw', text: "{'title':'a'}", label: 'single quotes' },
        { kind: 'raw', text: '{"title":"\\ud800"}', label: 'escaped lone surrogate' },
        { kind: 'raw', text: '{"title":"a\\u0000b","body":"\\u0000"}', label: 'escaped NUL' },
        { kind: 'raw', text: '{"minutes":1e999}', label: 'number overflow' },
        { kind: 'raw', text: '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}', label: 'prototype pollution' },
        { kind: 'raw', text: deep(5_000, '[', ']'), label: 'deep array (5k)' },
        { kind: 'raw', text: deep(100_000, '[', ']'), label: 'deep array (100k)' },
        { kind: 'raw', text: `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`, label: 'deep object (20k)' },
        { kind: 'raw', text: JSON.stringify({ title: 'x'.repeat(1_100_000) }), label: '1.1 MB JSON' },
        { kind: 'raw', text: '\u0000\u0001\u0002', label: 'control bytes' },
        { kind: 'raw', text: '', label: 'empty' },
      ),
    },
  );
}

export interface Headers {
  contentType?: string;
  contentEncoding?: string;
  encodeBody?: 'gzip' | 'deflate' | 'garbage';
  extra: Record<string, string>;
}

export const headers: fc.Arbitrary<Headers> = fc.record({
  contentType: fc.oneof(
    { weight: 8, arbitrary: fc.constant('application/json') },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        undefined,
        'application/json; charset=utf-16',
        'application/json; charset=latin1',
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'multipart/form-data',
        'application/xml',
        'application/json, text/plain',
        '*/*',
        'garbage',
      ),
    },
  ),
  contentEncoding: fc.oneof(
    { weight: 8, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'compress', 'gzip, gzip', 'x-unknown', 'GZIP') },
  ),
  encodeBody: fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom('gzip' as const, 'deflate' as const, 'garbage' as const) },
  ),
  extra: fc.dictionary(
    fc.constantFrom(
      'if-match',
      'if-none-match',
      'x-request-id',
      'accept',
      'origin',
      'x-csrf-token',
      'x-mcp-toolsets',
      'x-mcp-readonly',
      'range',
      'accept-encoding',
    ),
    fc.constantFrom(
      '*',
      'W/"x"',
      '"abc"',
      '',
      'x'.repeat(300),
      '\t',
      'application/json, text/event-stream',
      'http://evil.example',
      'bytes=0-1',
      'br',
      'ticket',
    ),
    { maxKeys: 3 },
  ),
});

/** Path values for a parameter: real ones of the world, or hostile (already URL-encoded or raw escapes). */
export function pathValue(name: string, pools: Pools): fc.Arbitrary<string> {
  const real = name === 'slug' ? pools.slugs : name === 'ref' ? [...pools.refs, ...pools.ids] : pools.ids;
  const hostile = fc.oneof(
    { weight: 3, arbitrary: hostileString.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '\ufffd'))) },
    { weight: 1, arbitrary: fc.constantFrom('%00', '%ff', '%E0%A4%A', '%', '%%', '%ED%A0%80', '..', '%2e%2e', 'a%2Fb', '%20', randomUUID()) },
  );
  return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...real.map(encodeURIComponent)) }, { weight: 2, arbitrary: hostile });
}

/** A query string: known parameters (repeated ones too) with hostile or real values, or raw escapes. */
export function query(pools: Pools): fc.Arbitrary<string> {
  const pair = fc.tuple(fc.constantFrom(...QUERY_KEYS), fieldValue(pools)).map(([k, v]) => {
    const s = typeof v === 'string' ? v : (JSON.stringify(v) ?? '');
    return `${encodeURIComponent(k)}=${encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '\ufffd'))}`;
  });
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant('') },
    { weight: 6, arbitrary: fc.array(pair, { maxLength: 6 }).map((ps) => ps.join('&')) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'q=%00',
        'q=%ff',
        'q=%ED%A0%80',
        'limit=%',
        'from=0000-01-01&to=0000-01-02',
        'stateIds[]=a&stateIds[0]=b',
        'a[b][c][d][e][f]=1',
        `q=${'x'.repeat(5000)}`,
      ),
    },
  );
}

export function encode(b: Body, h: Headers): Buffer | undefined {
  if (b.kind === 'none') return undefined;
  const text = b.kind === 'raw' ? b.text : (JSON.stringify(b.value) ?? 'null');
  const raw = Buffer.from(text, 'utf8');
  if (h.encodeBody === 'gzip') return gzipSync(raw);
  if (h.encodeBody === 'deflate') return deflateSync(raw);
  if (h.encodeBody === 'garbage') return Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), raw]);
  return raw;
}
