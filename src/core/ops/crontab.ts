/** A minute as a crontab line sees it (UTC): minute, hour, day of month, month (1-12), day of week (0 Sunday). */
export interface CronMinute {
  min: number;
  hour: number;
  date: number;
  month: number;
  dow: number;
}

/**
 * One line of the process's crontab, parsed at the edge (src/ops/crontab.ts, by graphile-worker,
 * whose format it is): the task, the identifier its jobs run under, the schedule as written.
 */
export interface CrontabItem {
  task: string;
  identifier: string;
  schedule: string;
  match(minute: CronMinute): boolean;
}
