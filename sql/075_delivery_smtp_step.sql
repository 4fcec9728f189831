-- How far the SMTP conversation of a delivery's current attempt got, written (and committed)
-- before the mailer goes past each step: `connected` (greeting, EHLO and login done),
-- `envelope` (MAIL FROM and RCPT TO accepted, the server waits for the data), `data` (the
-- message data is about to be written: from here on the server may hold the message). An
-- attempt that stopped without recording its outcome is sent again (same Message-ID) unless it
-- reached `data`, in which case the delivery is `unknown`. Null before the first step.
alter table document_deliveries
  add column smtp_step text check (smtp_step in ('connected', 'envelope', 'data'));
