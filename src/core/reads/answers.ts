import { LRUCache } from 'lru-cache';

/** At most this many bytes of remembered answers per process (a 400-ticket board is about 400,000). */
const MAX_BYTES = 64 * 1024 * 1024;

/**
 * Answers of reads (a board, "my work") this process computed, each with the read mark it was
 * computed under (sql/098_read_marks.sql: a number per workspace that every commit touching
 * what those reads show changes). An answer is given again only for the same key and the same
 * mark, and the caller reads the mark from PostgreSQL for every request (in the statement that
 * computes the answer when the mark is another, reads/remembered.ts): nothing here is
 * trusted from a notification or a clock, so a change committed through any process is seen by
 * the next request. Least recently used answers leave first.
 */
export class ReadAnswers {
  private answers = new LRUCache<string, { mark: string; body: Buffer }>({
    maxSize: MAX_BYTES,
    sizeCalculation: (a) => a.body.length + a.mark.length + 1,
  });

  /** The mark of the answer remembered for `key`, null when none. */
  markOf(key: string): string | null {
    return this.answers.peek(key)?.mark ?? null;
  }

  /** The answer remembered for `key` under exactly `mark`, if any. */
  get(key: string, mark: string): Buffer | undefined {
    const a = this.answers.get(key);
    return a && a.mark === mark ? a.body : undefined;
  }

  set(key: string, mark: string, body: Buffer): void {
    if (body.length < MAX_BYTES) this.answers.set(key, { mark, body });
  }
}
