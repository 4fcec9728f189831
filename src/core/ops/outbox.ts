import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { z } from 'zod';
import { defineOp } from '../operation.ts';

/** One message the local SMTP catcher stored. */
export interface OutboxMessage {
  file: string;
  from: string;
  to: string[];
  subject: string;
  date: Date | null;
  attachments: { filename: string; contentType: string; size: number }[];
}

const ADDRESS = (v: unknown): string[] => {
  const list = Array.isArray(v) ? v : v ? [v] : [];
  return list.flatMap((a: { value?: { address?: string }[] }) => (a.value ?? []).map((x) => x.address ?? '')).filter(Boolean);
};

/**
 * The newest messages the caller's workspace sent to the embedded default's outbox (null: mail
 * goes to a real SMTP server, there is no outbox), parsed with mailparser: the workspace's own
 * folder under it (src/jobs/machinery/outbox-server.ts), never another's. Owner or Admin. The
 * folder is the process's (`ctx.outboxDir`, from its configuration), never the caller's to name.
 */
export const listOutbox = defineOp({
  name: 'ops.outbox.list',
  action: 'ops.act',
  input: z.object({ limit: z.number().int().min(1).max(200).default(50).describe('How many messages, newest first.') }),
  output: null,
  run: async (ctx, { limit }): Promise<OutboxMessage[] | null> => {
    const outbox = ctx.outboxDir;
    if (!outbox) return null;
    const dir = join(outbox, ctx.principal.workspaceId);
    const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [] as string[];
      throw err;
    });
    const newest = names
      .filter((n) => n.endsWith('.eml'))
      .sort()
      .reverse()
      .slice(0, limit);
    return Promise.all(
      newest.map(async (file) => {
        const path = join(dir, file);
        const [raw, info] = await Promise.all([readFile(path), stat(path)]);
        const m = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
        return {
          file,
          from: ADDRESS(m.from).join(', '),
          to: ADDRESS(m.to),
          subject: m.subject ?? '',
          date: m.date ?? info.mtime,
          attachments: m.attachments.map((a) => ({ filename: a.filename ?? '(unnamed)', contentType: a.contentType, size: a.size })),
        };
      }),
    );
  },
});
