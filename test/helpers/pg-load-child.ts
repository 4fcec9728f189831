/**
 * A child process for test/pg-driver.test.ts: runs transactions and plain queries through the
 * app's own pool (src/db/connect.ts) against DATABASE_URL until stdin closes, and prints one line
 * per second: `ok <succeeded> failed <failed>`. Errors of single queries are expected (the test
 * cuts the connections); the process must stay alive through them.
 */
import { connect } from '../../src/db/connect.ts';

const sql = connect(process.env.DATABASE_URL!, { max: 6 });
let ok = 0;
let failed = 0;
let running = true;

async function client(n: number) {
  while (running) {
    try {
      if (n % 2)
        await sql.begin(async (t) => {
          await t`select pg_sleep(0.02)`;
          await t`select ${n}::int as n`;
        });
      else await sql`select pg_sleep(0.01), ${n}::int as n`;
      ok++;
    } catch {
      failed++;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

const clients = Array.from({ length: 12 }, (_, n) => client(n));
const report = setInterval(() => console.log(`ok ${ok} failed ${failed}`), 200);
process.stdin.resume();
process.stdin.on('end', async () => {
  running = false;
  await Promise.all(clients);
  clearInterval(report);
  await sql.end({ timeout: 1 });
  console.log('done');
});
