import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { connect, type Db } from '../src/db/connect.ts';
import { migrate, migrationsApplied } from '../src/db/migrate.ts';
import { withDatabase } from './setup/global.ts';

// An empty database of its own (not the migrated template) and a folder of migration files
// written by each test, so the runner is tested on files whose failures are chosen here.
let adminUrl: string;
let name: string;
let url: string;
let sql: Db;
let dir: string;

beforeAll(async () => {
  adminUrl = inject('pgAdminUrl');
  name = `wt_m_${randomBytes(6).toString('hex')}`;
  const admin = connect(adminUrl, { max: 1 });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  url = withDatabase(adminUrl, name);
  sql = connect(url, { max: 4 });
  dir = await mkdtemp(path.join(os.tmpdir(), 'wt-migrate-'));
});

afterAll(async () => {
  await sql.end({ timeout: 5 });
  const admin = connect(adminUrl, { max: 1 });
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.end();
  await rm(dir, { recursive: true, force: true });
});

const write = (file: string, text: string) => writeFile(path.join(dir, file), text);
const recorded = async () => (await sql<{ version: string }[]>`select version from schema_migrations order by version`).map((r) => r.version);
const tableExists = async (table: string) => (await sql`select 1 from pg_tables where schemaname = 'public' and tablename = ${table}`).length === 1;

describe('migrate: one transaction per file', () => {
  it('a failing file rolls back only itself and stops the run; earlier files stay applied', async () => {
    await write('001_alpha.sql', 'create table alpha (id int primary key);\ninsert into alpha values (1);\n');
    await write('002_beta.sql', 'create table beta (id int);\nselect 1 / 0;\n');
    await write('003_gamma.sql', 'create table gamma (id int);\n');
    await expect(migrate(sql, url, dir)).rejects.toMatchObject({ code: '22012' });
    expect(await recorded()).toEqual(['001_alpha.sql']);
    expect(await tableExists('alpha')).toBe(true);
    expect(await tableExists('beta')).toBe(false);
    expect(await tableExists('gamma')).toBe(false);
    expect(await migrationsApplied(sql, dir)).toBe(false);
  });

  it('after the file is fixed, the run resumes at it; a no-transaction file builds indexes concurrently', async () => {
    await write('002_beta.sql', 'create table beta (id int);\n');
    await write(
      '004_indexes.sql',
      [
        '-- migrate: no-transaction',
        '-- Built without locking writers out; `if not exists` makes a half-done run safe to repeat.',
        'create index concurrently if not exists beta_id on beta (id);',
        'create index concurrently if not exists gamma_id on gamma (id);',
        '',
      ].join('\n'),
    );
    expect(await migrate(sql, url, dir)).toEqual(['002_beta.sql', '003_gamma.sql', '004_indexes.sql']);
    expect(await recorded()).toEqual(['001_alpha.sql', '002_beta.sql', '003_gamma.sql', '004_indexes.sql']);
    const indexes = await sql<{ name: string; valid: boolean }[]>`
      select c.relname as name, i.indisvalid as valid
        from pg_index i join pg_class c on c.oid = i.indexrelid
       where c.relname = any(${['beta_id', 'gamma_id']}::text[]) order by 1`;
    expect(indexes).toEqual([
      { name: 'beta_id', valid: true },
      { name: 'gamma_id', valid: true },
    ]);
    expect(await migrationsApplied(sql, dir)).toBe(true);
  });

  it('a concurrent index in an ordinary (transactional) file is refused, which is what the marker is for', async () => {
    await write('005_plain_index.sql', 'create index concurrently if not exists alpha_id on alpha (id);\n');
    await expect(migrate(sql, url, dir)).rejects.toMatchObject({ code: '25001' });
    expect(await migrationsApplied(sql, dir)).toBe(false);
    await unlink(path.join(dir, '005_plain_index.sql'));
    expect(await migrationsApplied(sql, dir)).toBe(true);
  });

  it('re-running applies nothing, and two runs started together apply a new file once', async () => {
    expect(await migrate(sql, url, dir)).toEqual([]);
    await write('006_delta.sql', 'create table delta (id int);\n');
    const runs = await Promise.all([migrate(sql, url, dir), migrate(sql, url, dir)]);
    expect(runs.flat()).toEqual(['006_delta.sql']);
    expect(await recorded()).toEqual(['001_alpha.sql', '002_beta.sql', '003_gamma.sql', '004_indexes.sql', '006_delta.sql']);
    expect(await migrationsApplied(sql, dir)).toBe(true);
  });
});
