/**
 * A read's answer as JSON text that PostgreSQL built, to be sent as it is. A board of 400 ticket
 * summaries is about 400 KB: postgres.js parsed the json column and Koa serialised the same data
 * again, 40 % of the web process's CPU per board (issue 25), while PostgreSQL had already written
 * the JSON. An operation that returns JsonText gives the REST door that text; doors that need the
 * value (MCP, CLI, tests) run the operation's object form, which reads the same SQL.
 */
export interface JsonText {
  readonly jsonText: string;
}

export function jsonText(text: string): JsonText {
  return { jsonText: text };
}

export function isJsonText(value: unknown): value is JsonText {
  return typeof value === 'object' && value !== null && typeof (value as { jsonText?: unknown }).jsonText === 'string';
}

/**
 * `[a,b,c]` of JSON texts, each a complete JSON value: joins them without reading them.
 */
export function jsonArrayText(items: readonly string[]): string {
  return `[${items.join(',')}]`;
}
