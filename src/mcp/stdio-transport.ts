import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, isJSONRPCErrorResponse, isJSONRPCRequest, isJSONRPCResultResponse, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { invalidMessage, parseError, rpcError, type RpcError } from './wire.ts';

/** Longest line read; the SDK's stdio transport has no bound at all. */
const MAX_LINE = 8 * 1024 * 1024;

type RequestId = string | number;

/**
 * Newline-delimited JSON-RPC over stdin/stdout, as the SDK's StdioServerTransport, plus what it
 * lacks: a line that is not JSON is answered -32700 and JSON that is not a message -32600 (the SDK
 * only reports them to onerror, and the client waits for an answer forever), and the end of stdin
 * is not the end of the work: `drained` resolves once every request read has been answered, so a
 * client that writes its last call and closes stdin still gets the answer.
 */
export class LineTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onerror?: (error: Error) => void;
  onclose?: () => void;
  /** Resolves after stdin ended and every request read was answered (or `drainMs` passed). */
  readonly drained: Promise<void>;

  private readonly decoder = new StringDecoder('utf8');
  private buffer = '';
  /** Inside an over-long line: its rest is dropped up to the next newline. */
  private skipping = false;
  private readonly pending = new Set<RequestId>();
  private ended = false;
  private finish!: () => void;

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
    private readonly drainMs = 60_000,
  ) {
    this.drained = new Promise((resolve) => (this.finish = resolve));
  }

  private readonly onData = (chunk: Buffer | string) => {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      if (this.skipping) this.skipping = false;
      else this.line(line);
    }
    if (this.buffer.length > MAX_LINE) {
      if (!this.skipping) this.reply(rpcError(null, ErrorCode.InvalidRequest, `Invalid request: a message longer than ${MAX_LINE} bytes.`));
      this.skipping = true;
      this.buffer = '';
    }
  };

  private readonly onEnd = () => {
    // a last message without its newline still counts
    const rest = this.buffer + this.decoder.end();
    this.buffer = '';
    if (!this.skipping) this.line(rest);
    this.ended = true;
    if (this.pending.size === 0) this.finish();
    else {
      const timer = setTimeout(() => {
        this.onerror?.(new Error(`stdin closed; ${this.pending.size} request(s) still unanswered after ${this.drainMs} ms`));
        this.finish();
      }, this.drainMs);
      void this.drained.then(() => clearTimeout(timer));
    }
  };

  private readonly onStreamError = (error: Error) => this.onerror?.(error);

  private line(text: string) {
    const trimmed = text.trim();
    if (!trimmed) return;
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch {
      return this.reply(parseError());
    }
    if (Array.isArray(value)) return this.reply(rpcError(null, ErrorCode.InvalidRequest, 'Invalid request: batches are not supported over stdio.'));
    const bad = invalidMessage(value);
    if (bad) return this.reply(bad);
    const msg = value as JSONRPCMessage;
    if (isJSONRPCRequest(msg)) this.pending.add(msg.id);
    // a cancelled request gets no answer (MCP): stop waiting for it
    if (!isJSONRPCRequest(msg) && 'method' in msg && msg.method === 'notifications/cancelled')
      this.settle((msg.params as { requestId?: RequestId } | undefined)?.requestId);
    this.onmessage?.(msg);
  }

  private reply(error: RpcError) {
    void this.write(error);
  }

  private settle(id: RequestId | undefined) {
    if (id === undefined || !this.pending.delete(id)) return;
    if (this.ended && this.pending.size === 0) this.finish();
  }

  private write(message: unknown): Promise<void> {
    return new Promise((resolve) => {
      // resolves once the line is handed to the OS, so nothing is lost when the process exits after `drained`
      this.output.write(JSON.stringify(message) + '\n', (err) => {
        if (err) this.onerror?.(err);
        resolve();
      });
    });
  }

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('end', this.onEnd);
    this.input.on('error', this.onStreamError);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    await this.write(message);
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) this.settle(message.id);
  }

  async close(): Promise<void> {
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.off('error', this.onStreamError);
    this.input.pause();
    this.finish();
    this.onclose?.();
  }
}
