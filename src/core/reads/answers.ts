import { LRUCache } from 'lru-cache';

/** At most this many bytes of remembered answers per process (a 400-ticket board is about 400,000). */
const MAX_BYTES = 64 * 1024 * 1024;

/** A remembered answer: its JSON bytes, and a short text kept beside them (the ticket page's ETag). */
export interface Answer {
  body: Buffer;
  tag?: string;
}

/**
 * Answers of reads (a board, "my work") this process computed, each with the read mark it was
 * computed under (sql/098_read_marks.sql: a number per workspace that every commit touching
 * what those reads show changes). An answer is given again only for the same key and the same
 * mark, and the caller reads the mark from PostgreSQL for every request: nothing here is
 * trusted from a notification or a clock, so a change committed through any process is seen by
 * the next request. Least recently used answers leave first.
 */
export class ReadAnswers {
  private answers = new LRUCache<string, { mark: string; answer: Answer; moving: boolean }>({
    maxSize: MAX_BYTES,
    sizeCalculation: (a) => a.answer.body.length + (a.answer.tag?.length ?? 0) + a.mark.length + 1,
  });

  /** Whether an answer is remembered for `key`, under whatever mark. */
  has(key: string): boolean {
    return this.answers.has(key);
  }

  /** The answer remembered for `key` under exactly `mark`, if any. */
  get(key: string, mark: string): Answer | undefined {
    const a = this.answers.get(key);
    return a && a.mark === mark ? a.answer : undefined;
  }

  /**
   * Whether `key`'s mark had moved when its answer was last computed: its last look-up found the
   * answer stale, or its last read found the mark moved since the one before.
   */
  moving(key: string): boolean {
    return this.answers.peek(key)?.moving ?? false;
  }

  set(key: string, mark: string, answer: Answer): void {
    const before = this.answers.peek(key);
    if (answer.body.length < MAX_BYTES) this.answers.set(key, { mark, answer, moving: before !== undefined && before.mark !== mark });
  }
}
