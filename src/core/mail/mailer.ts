/** One outgoing email with its attachments. `messageId` is ours, generated and stored before sending. */
export interface OutgoingMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  messageId: string;
  headers?: Record<string, string>;
  attachments: { filename: string; contentType: string; content: Uint8Array }[];
}

/**
 * What an SMTP attempt came to, told apart by the SMTP step reached:
 * - `accepted`: the server took the message (250 after DATA);
 * - `rejected`: a permanent refusal (5xx) at any step;
 * - `temporary`: a temporary refusal (4xx), or the connection failed before the message data was sent: retry later;
 * - `unknown`: the connection broke after the message data was sent: the server may have it; never re-sent automatically.
 * `reply` is the server's reply line (or the network error) for the delivery's `detail`.
 */
export interface SendResult {
  outcome: 'accepted' | 'rejected' | 'temporary' | 'unknown';
  reply: string;
}

/**
 * The steps of an SMTP conversation, in order: `connected` (greeting, EHLO, login done),
 * `envelope` (sender and recipient accepted, the server waits for the data), `data` (the message
 * data is about to be written: from here on the server may hold the message).
 */
export type SendStep = 'connected' | 'envelope' | 'data';

/**
 * Told each step before the mailer goes past it, and awaited: a caller that must survive its own
 * crash records the step durably here. When it rejects, the mailer ends the conversation before
 * writing any message data and answers `temporary` (nothing was sent).
 */
export type OnSendStep = (step: SendStep) => Promise<void>;

export interface Mailer {
  send(mail: OutgoingMail, onStep?: OnSendStep): Promise<SendResult>;
  close?(): Promise<void>;
}
