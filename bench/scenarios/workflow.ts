import type { Scenario } from '../run.ts';
import { latency, load, ratio } from '../lib.ts';

/**
 * Issue 2: authenticated GET /workflow against a bare Koa handler returning the same JSON.
 * Aim: p50 within 1.5x of the bare handler. Measured twice: one caller at a time (service
 * latency, microsecond resolution) and saturated with 10 connections (autocannon).
 */
export const workflow: Scenario = {
  name: 'workflow',
  async run(env) {
    const url = `${env.api}/api/w/${env.demo.slug}/workflow`;
    const headers = { authorization: `Bearer ${env.demo.people.member.token}` };
    const auth1 = await latency('GET /workflow (token), 1 conn', url, { headers });
    const bare1 = await latency('bare Koa, same JSON, 1 conn', `${env.bare}/`);
    const auth10 = await load('GET /workflow (token), 10 conn', url, { headers });
    const bare10 = await load('bare Koa, same JSON, 10 conn', `${env.bare}/`);
    return { rows: [auth1, bare1, auth10, bare10], notes: [ratio(auth1, bare1), ratio(auth10, bare10)] };
  },
};
