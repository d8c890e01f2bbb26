// The store's notifications bot (issue 47 item 7): the two Bot API methods Kassa calls with the token a
// store gave it — sendMessage (a notification) and getUpdates (the /start <code> a member sent to link
// their chat) — at TELEGRAM_API_URL (Telegram's, a local Bot API server, or a test's imitation: the
// operator's configuration, so its address is trusted as the chain API's is). The token is in the
// URL's path: no error text ever repeats it.
import type { Config } from '../config.ts';

const TIMEOUT_MS = 15_000;

/** A Bot API token as BotFather gives it: `<bot id>:<secret>`. */
export const BOT_TOKEN = /^[0-9]{1,20}:[A-Za-z0-9_-]{20,100}$/;

export class BotApiFailure extends Error {
  override name = 'BotApiFailure';
}

async function call(config: Pick<Config, 'telegramApiUrl'>, token: string, method: string, body: object): Promise<unknown> {
  const scrub = (text: string) => text.replaceAll(token, '<token>');
  let response: Response;
  try {
    response = await fetch(`${config.telegramApiUrl}/bot${token}/${method}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    throw new BotApiFailure(scrub(`Telegram could not be reached (${error instanceof Error ? error.message : String(error)}${cause})`));
  }
  const text = await response.text();
  let answer: { ok?: unknown; result?: unknown; description?: unknown } = {};
  try {
    answer = JSON.parse(text) as typeof answer;
  } catch {
    answer = {};
  }
  if (!response.ok || answer.ok !== true) {
    const description = typeof answer.description === 'string' ? answer.description.slice(0, 300) : `HTTP ${response.status}`;
    throw new BotApiFailure(scrub(`Telegram refused ${method}: ${description}`));
  }
  return answer.result;
}

/** Sends `text` (plain, no markup) to a chat. */
export async function sendBotMessage(config: Pick<Config, 'telegramApiUrl'>, token: string, chatId: string, text: string): Promise<void> {
  await call(config, token, 'sendMessage', { chat_id: chatId, text, link_preview_options: { is_disabled: true } });
}

interface BotStart {
  updateId: number;
  chatId: string;
  /** What followed `/start ` in a private chat's message. */
  code: string;
}

/**
 * The `/start <code>` messages of private chats among the bot's waiting updates, and the offset that
 * marks every update read (the next getUpdates answers only newer ones). A bot with a webhook set
 * cannot be asked this way: Telegram refuses getUpdates (the failure's text says so).
 */
export async function botStarts(config: Pick<Config, 'telegramApiUrl'>, token: string, offset?: number): Promise<{ starts: BotStart[]; next: number | null }> {
  const result = await call(config, token, 'getUpdates', { timeout: 0, allowed_updates: ['message'], ...(offset !== undefined ? { offset } : {}) });
  const updates = Array.isArray(result) ? (result as Array<Record<string, unknown>>) : [];
  const starts: BotStart[] = [];
  let last: number | null = null;
  for (const update of updates) {
    if (typeof update.update_id !== 'number') continue;
    last = Math.max(last ?? 0, update.update_id);
    const message = update.message as { text?: unknown; chat?: { id?: unknown; type?: unknown } } | undefined;
    const match = typeof message?.text === 'string' ? /^\/start(?:@\w+)?\s+([A-Za-z0-9_-]{1,64})\s*$/.exec(message.text) : null;
    if (match && message?.chat?.type === 'private' && (typeof message.chat.id === 'number' || typeof message.chat.id === 'string')) {
      starts.push({ updateId: update.update_id, chatId: String(message.chat.id), code: match[1]! });
    }
  }
  return { starts, next: last === null ? null : last + 1 };
}
