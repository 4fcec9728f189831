import { parseCrontab } from 'graphile-worker';
import type { CrontabItem } from '../core/ops/crontab.ts';

/**
 * The process's crontab (graphile-worker's format) as the core's crontab view reads it: parsed by
 * the library whose format it is, with each line's schedule (its first five fields) as written.
 */
export function crontabItems(crontab: string): CrontabItem[] {
  const lines = crontab.split('\n').filter((l) => l.trim() && !l.trim().startsWith('#'));
  return parseCrontab(crontab).map((item, i) => ({
    task: item.task,
    identifier: item.identifier,
    schedule: lines[i]?.trim().split(/\s+/).slice(0, 5).join(' ') ?? '',
    match: (minute) => item.match(minute),
  }));
}
