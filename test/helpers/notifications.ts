// Notifications' far ends for tests: a real SMTP server (the npm package smtp-server) that keeps every
// message it accepts, an imitation of Telegram's Bot API (sendMessage and getUpdates, as Telegram
// documents them: https://core.telegram.org/bots/api) on 127.0.0.1, and the worker's
// notification__send jobs run through Graphile Worker (runOnce).
import http from 'node:http';
import { pino } from 'pino';
import { SMTPServer } from 'smtp-server';
import { graphileLogger } from '../../src/db/migrate.ts';
import { sql, z } from '../../src/db/pool.ts';
import { taskList } from '../../src/worker/tasks.ts';
import notificationSend from '../../tasks/notification__send.ts';
import type { TestApp } from './app.ts';
import { runJobsOnce } from './jobs.ts';
import { close, listen } from './servers.ts';

export interface ReceivedMail {
  from: string;
  to: string[];
  /** The decoded Subject header. */
  subject: string;
  /** The text body, quoted-printable decoded. */
  text: string;
  /** The message as it came over SMTP. */
  raw: string;
}

export interface MailServer {
  url: string;
  received: ReceivedMail[];
  close(): Promise<void>;
}

/** An RFC 2047 encoded word (=?UTF-8?Q?…?= or ?B?) decoded. */
const decodeWords = (value: string): string =>
  value.replace(/=\?utf-8\?([QB])\?([^?]*)\?=\s*/gi, (_, kind: string, text: string) =>
    kind.toUpperCase() === 'B'
      ? Buffer.from(text, 'base64').toString('utf8')
      : Buffer.from(
          text.replaceAll('_', ' ').replace(/=([0-9A-F]{2})/gi, (__, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
          'latin1',
        ).toString('utf8'),
  );

const quotedPrintable = (value: string): string =>
  Buffer.from(
    value.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
    'latin1',
  ).toString('utf8');

/** A plain SMTP server (no TLS, no authentication) on 127.0.0.1 that accepts every message. */
export async function startMailServer(): Promise<MailServer> {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const split = raw.indexOf('\r\n\r\n');
        const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
        const body = raw.slice(split + 4);
        const subject = /^Subject: (.*)$/im.exec(head)?.[1] ?? '';
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          subject: decodeWords(subject),
          text: /quoted-printable/i.test(head) ? quotedPrintable(body) : body,
          raw,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as { port: number };
  return { url: `smtp://127.0.0.1:${port}`, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

export interface BotApi {
  /** TELEGRAM_API_URL for the app. */
  url: string;
  /** Every sendMessage Telegram accepted: the token it came with, the chat and the text. */
  sent: Array<{ token: string; chatId: string; text: string }>;
  /** Every request's path (the token in it), for checks. */
  paths: string[];
  /** A private chat's user sends the bot a message (an update getUpdates hands out). */
  userSends(chatId: number, text: string): void;
  /** The next `n` sendMessage calls answer 500 as Telegram does when it fails. */
  failNext(n: number): void;
  close(): Promise<void>;
}

/** The Bot API's sendMessage and getUpdates for any token in `tokens` (others: 401 Unauthorized, as Telegram answers). */
export async function startBotApi(tokens: readonly string[]): Promise<BotApi> {
  const sent: BotApi['sent'] = [];
  const paths: string[] = [];
  const updates: Array<{ update_id: number; message: object }> = [];
  let nextUpdate = 1000;
  let failures = 0;
  const { server, port } = await listen(
    http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        paths.push(req.url ?? '');
        const answer = (status: number, body: object) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
        const match = /^\/bot([^/]+)\/(\w+)$/.exec(req.url ?? '');
        if (!match || !tokens.includes(match[1]!)) return answer(401, { ok: false, error_code: 401, description: 'Unauthorized' });
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
        } catch {
          return answer(400, { ok: false, error_code: 400, description: 'Bad Request: invalid JSON' });
        }
        if (match[2] === 'sendMessage') {
          if (failures > 0) {
            failures -= 1;
            return answer(500, { ok: false, error_code: 500, description: 'Internal Server Error' });
          }
          if (typeof body.text !== 'string' || body.chat_id === undefined)
            return answer(400, { ok: false, error_code: 400, description: 'Bad Request: message text is empty' });
          sent.push({ token: match[1]!, chatId: String(body.chat_id), text: body.text });
          return answer(200, {
            ok: true,
            result: { message_id: sent.length, chat: { id: body.chat_id, type: 'private' }, date: Math.floor(Date.now() / 1000), text: body.text },
          });
        }
        if (match[2] === 'getUpdates') {
          // An offset confirms every update before it: they are forgotten (Telegram's rule).
          if (typeof body.offset === 'number') {
            const offset = body.offset;
            updates.splice(0, updates.length, ...updates.filter((u) => u.update_id >= offset));
          }
          return answer(200, { ok: true, result: updates });
        }
        return answer(404, { ok: false, error_code: 404, description: 'Not Found' });
      });
    }),
  );
  return {
    url: `http://127.0.0.1:${port}`,
    sent,
    paths,
    userSends(chatId, text) {
      nextUpdate += 1;
      updates.push({
        update_id: nextUpdate,
        message: {
          message_id: nextUpdate,
          from: { id: chatId, is_bot: false, first_name: 'Owner' },
          chat: { id: chatId, type: 'private' },
          date: Math.floor(Date.now() / 1000),
          text,
        },
      });
    },
    failNext(n) {
      failures = n;
    },
    close: () => close(server),
  };
}

/**
 * Runs notification__send jobs through Graphile Worker until none is due (a failed one is handed back
 * with its backoff; `hurry` moves retries to now, as time passing would).
 */
export async function runNotifications(app: TestApp, options: { hurry?: boolean } = {}): Promise<void> {
  const log = pino({ level: 'silent' });
  const deps = { config: app.config, pool: app.pool, log, now: () => new Date() };
  for (let round = 0; round < 20; round += 1) {
    await runJobsOnce({
      connectionString: app.db.url,
      taskList: taskList(deps, { notification__send: notificationSend }),
      noHandleSignals: true,
      logger: graphileLogger(log, true),
    });
    let left = 0;
    for (let i = 0; i < 500; i += 1) {
      const state = await app.pool.one(sql.type(z.object({ locked: z.number(), left: z.number() }))`
        select (select count(*) from graphile_worker.jobs where task_identifier = 'notification__send' and locked_at is not null)::int as locked,
               (select count(*) from graphile_worker.jobs where task_identifier = 'notification__send' and attempts < max_attempts)::int as left
      `);
      left = state.left;
      if (state.locked === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    if (left === 0) return;
    if (!options.hurry) {
      const due = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
        select count(*)::int as n from graphile_worker.jobs where task_identifier = 'notification__send' and run_at <= now() and attempts < max_attempts`);
      if (due === 0) return;
    } else {
      await app.pool.query(
        sql.unsafe`update graphile_worker._private_jobs set run_at = now() where task_id = (select id from graphile_worker._private_tasks where identifier = 'notification__send')`,
      );
    }
  }
}
