import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { connect, type Db } from '../../src/db/connect.ts';
import { withDatabase } from '../setup/global.ts';

export interface TestDb {
  sql: Db;
  url: string;
  name: string;
  close: () => Promise<void>;
}

/** A fresh database cloned from the migrated template: each test file gets its own. */
export async function testDb(): Promise<TestDb> {
  const adminUrl = inject('pgAdminUrl');
  const name = `wt_t_${randomBytes(6).toString('hex')}`;
  const admin = connect(adminUrl, { max: 1 });
  await admin.unsafe(`create database ${name} template ${inject('pgTemplate')}`);
  await admin.end();
  const url = withDatabase(adminUrl, name);
  const sql = connect(url, { max: 10 });
  return {
    sql,
    url,
    name,
    close: async () => {
      await sql.end({ timeout: 5 });
      const a = connect(adminUrl, { max: 1 });
      await a.unsafe(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
}
