// Telegram's side for tests: a key pair standing in for Telegram's (TELEGRAM_PUBLIC_KEY), init data
// signed with it as Telegram signs for third parties (Ed25519 over `<bot_id>:WebAppData\n` and the
// sorted key=value lines, written here from Telegram's documentation, not from Kassa's code), and a
// harness page on its own origin that plays a Telegram web client: it frames the Mini App with the
// launch parameters in the fragment and speaks the web_app_* events both ways by postMessage, as
// Telegram's web clients do with Telegram's own script (telegram-web-app.js) in the frame.
import crypto from 'node:crypto';
import http from 'node:http';
import nacl from 'tweetnacl';
import { close, listen } from './servers.ts';

export interface TelegramKeys {
  publicKeyHex: string;
  secretKey: Uint8Array;
}

export function telegramKeys(): TelegramKeys {
  const pair = nacl.sign.keyPair();
  return { publicKeyHex: Buffer.from(pair.publicKey).toString('hex'), secretKey: pair.secretKey };
}

export interface InitDataInput {
  botId: number;
  user: { id: number; first_name?: string; username?: string; language_code?: string };
  startParam?: string;
  /** Seconds since the epoch (default: now). */
  authDate?: number;
  /** Changes a field after signing (a forgery). */
  tamper?: (fields: Map<string, string>) => void;
}

/** Init data as a Telegram client passes it (tgWebAppData): URL-encoded fields with `signature` and `hash`. */
export function signInitData(keys: TelegramKeys, input: InitDataInput): string {
  const fields = new Map<string, string>([
    ['query_id', 'AAHdF6IQAAAAAN0XohDhrOrc'],
    ['user', JSON.stringify({ first_name: 'Test', language_code: 'en', allows_write_to_pm: true, ...input.user })],
    ['auth_date', String(input.authDate ?? Math.floor(Date.now() / 1000))],
    ...(input.startParam ? [['start_param', input.startParam] as [string, string]] : []),
  ]);
  const check = `${input.botId}:WebAppData\n${[...fields.keys()]
    .sort()
    .map((key) => `${key}=${fields.get(key)}`)
    .join('\n')}`;
  fields.set('signature', Buffer.from(nacl.sign.detached(Buffer.from(check), keys.secretKey)).toString('base64url'));
  // The bot-token HMAC Kassa never checks (it holds no token): present, as in real init data.
  fields.set('hash', crypto.randomBytes(32).toString('hex'));
  input.tamper?.(fields);
  return new URLSearchParams([...fields]).toString();
}

/** Telegram's dark theme's colours (themeParams), as a client sends them. */
export const DARK_THEME = {
  bg_color: '#17212b',
  secondary_bg_color: '#232e3c',
  text_color: '#f5f5f5',
  hint_color: '#708499',
  link_color: '#6ab3f3',
  button_color: '#5288c1',
  button_text_color: '#ffffff',
  section_separator_color: '#111921',
} as const;

export interface TelegramHarness {
  origin: string;
  /** The Mini App's origin (Kassa's checkout): the only one framed and heard. Set it once Kassa runs. */
  appOrigin: string;
  /** The harness page framing `miniAppUrl` (with the launch in its fragment). */
  url(miniAppUrl: string): string;
  close(): Promise<void>;
}

/** The CSS Telegram's web client (Web A) sends a Mini App's frame once it is ready (set_custom_style): its scrollbars. */
export const WEB_CLIENT_STYLE = '* { scrollbar-width: auto; scrollbar-color: #ff0000 transparent; }';

/**
 * A page on its own origin that plays Telegram's web client: it frames the Mini App and records every
 * event the Mini App posts (window.telegramEvents), answers iframe_ready with set_custom_style
 * (WEB_CLIENT_STYLE), web_app_request_theme with theme_changed (window.telegramTheme) and
 * web_app_request_viewport with viewport_changed, and sends any event with
 * window.sendToMiniApp(type, data), addressed to the Mini App's origin. Only messages from the Mini
 * App's origin count (Telegram's script posts them with target `*`).
 */
export async function startTelegramHarness(theme: Record<string, string> = DARK_THEME): Promise<TelegramHarness> {
  const page = (src: string, appOrigin: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Telegram (harness)</title>
<style>body{margin:0;background:#0e1621}iframe{border:0;width:100vw;height:100vh;display:block}</style></head>
<body><iframe id="miniapp" title="Mini App" src="${src.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}"></iframe>
<script>
const APP_ORIGIN = ${JSON.stringify(appOrigin)};
window.telegramEvents = [];
window.telegramTheme = ${JSON.stringify(theme)};
window.sendToMiniApp = (eventType, eventData) =>
  document.getElementById('miniapp').contentWindow.postMessage(JSON.stringify({ eventType, eventData }), APP_ORIGIN);
window.addEventListener('message', (event) => {
  if (event.origin !== APP_ORIGIN) return;
  let message;
  try { message = JSON.parse(event.data); } catch { return; }
  window.telegramEvents.push(message);
  if (message.eventType === 'iframe_ready') window.sendToMiniApp('set_custom_style', ${JSON.stringify(WEB_CLIENT_STYLE)});
  if (message.eventType === 'web_app_request_theme') window.sendToMiniApp('theme_changed', { theme_params: window.telegramTheme });
  if (message.eventType === 'web_app_request_viewport') window.sendToMiniApp('viewport_changed', { height: 640, is_expanded: true, is_state_stable: true });
});
</script></body></html>`;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://harness');
    const src = url.searchParams.get('src');
    if (url.pathname !== '/telegram' || !src || !harness.appOrigin || !src.startsWith(`${harness.appOrigin}/`)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(page(src, harness.appOrigin));
  });
  const { port } = await listen(server);
  const origin = `http://127.0.0.1:${port}`;
  const harness: TelegramHarness = {
    origin,
    appOrigin: '',
    url: (miniAppUrl) => `${origin}/telegram?src=${encodeURIComponent(miniAppUrl)}`,
    close: () => close(server),
  };
  return harness;
}

/** The URL Telegram opens the Mini App at: BotFather's URL with the launch parameters in its fragment. */
export function launchUrl(miniAppUrl: string, launch: { initData: string; startParam?: string; theme?: Record<string, string>; platform?: string }): string {
  const fragment = new URLSearchParams({
    tgWebAppData: launch.initData,
    tgWebAppVersion: '8.0',
    tgWebAppPlatform: launch.platform ?? 'weba',
    tgWebAppThemeParams: JSON.stringify(launch.theme ?? {}),
    ...(launch.startParam ? { tgWebAppStartParam: launch.startParam } : {}),
  });
  return `${miniAppUrl}#${fragment.toString()}`;
}
