// Kassa's emails (notifications, issue 47 item 7): plain text through the operator's SMTP server
// (SMTP_URL, SMTP_FROM), sent with nodemailer. The SMTP URL holds a password: an error's text never
// repeats it.
import nodemailer from 'nodemailer';
import type { Config } from '../config.ts';

/** How long one message may take, connection included. */
const SEND_TIMEOUT_MS = 30_000;

interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** Whether this Kassa can send email (SMTP_URL and SMTP_FROM set). */
export const canSendMail = (config: Pick<Config, 'smtpUrl' | 'smtpFrom'>): boolean => config.smtpUrl !== null && config.smtpFrom !== null;

/** An error's text without the SMTP URL's password (or user). */
function withoutCredentials(text: string, smtpUrl: string): string {
  const url = new URL(smtpUrl);
  let out = text;
  for (const secret of [url.password, decodeURIComponent(url.password), url.username, decodeURIComponent(url.username)]) {
    if (secret.length >= 3) out = out.replaceAll(secret, '***');
  }
  return out;
}

/**
 * Sends one email; resolves when the SMTP server accepted it, throws an Error (its message free of
 * credentials) otherwise. STARTTLS is used when the server offers it (smtps:// is TLS from the start).
 */
export async function sendMail(config: Pick<Config, 'smtpUrl' | 'smtpFrom'>, mail: Mail): Promise<void> {
  if (config.smtpUrl === null || config.smtpFrom === null) throw new Error('email is not set up on this Kassa (SMTP_URL and SMTP_FROM)');
  const transport = nodemailer.createTransport({
    url: config.smtpUrl,
    connectionTimeout: SEND_TIMEOUT_MS,
    greetingTimeout: SEND_TIMEOUT_MS,
    socketTimeout: SEND_TIMEOUT_MS,
  });
  try {
    await transport.sendMail({ from: config.smtpFrom, to: mail.to, subject: mail.subject, text: mail.text });
  } catch (error) {
    throw new Error(withoutCredentials(error instanceof Error ? error.message : String(error), config.smtpUrl));
  } finally {
    transport.close();
  }
}
