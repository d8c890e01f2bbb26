// Images served by Kassa itself (no third-party assets): coin and chain icons (web3icons' MIT
// icons where there is one, see static/icons/LICENSE.md; else a coloured disc with the ticker drawn
// here), TON Connect wallet badges, and the PNG icon of the TON Connect manifest.
import fs from 'node:fs';
import zlib from 'node:zlib';

const COLOURS: Record<string, string> = {
  TON: '#0098EA',
  USDT: '#26A17B',
  NOT: '#1F1F1F',
  DOGS: '#B5651D',
  BUILD: '#6B4EFF',
  BLUM: '#111111',
  DUST: '#8A6D3B',
  DYOR: '#2E7D32',
  STON: '#0B57D0',
  XAUt0: '#C9A227',
};

const escapeXml = (text: string): string => text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

function badgeSvg(symbol: string, colour = COLOURS[symbol] ?? '#555555'): string {
  const label = escapeXml(symbol.slice(0, 5));
  const size = label.length > 3 ? 13 : 16;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64" role="img" aria-label="${label}"><circle cx="32" cy="32" r="32" fill="${colour}"/><text x="32" y="37" font-family="system-ui,sans-serif" font-size="${size}" font-weight="700" text-anchor="middle" fill="#fff">${label}</text></svg>`;
}

const ICONS: ReadonlyMap<string, string> = new Map(
  fs
    .readdirSync(new URL('./static/icons/', import.meta.url))
    .filter((file) => file.endsWith('.svg'))
    .map((file) => [file.slice(0, -4), fs.readFileSync(new URL(`./static/icons/${file}`, import.meta.url), 'utf8')]),
);

/** A coin's (or chain's: the TON chain is drawn as TON) icon as SVG. */
export const coinSvg = (symbol: string): string => ICONS.get(symbol) ?? badgeSvg(symbol);

const WALLET_BADGES: Record<string, { label: string; colour: string }> = {
  'telegram-wallet': { label: 'W', colour: '#2481CC' },
  tonkeeper: { label: 'Tk', colour: '#1D2633' },
  mytonwallet: { label: 'MW', colour: '#0088CC' },
  tonhub: { label: 'Th', colour: '#1A1A1A' },
};

/** A wallet's badge in TON Connect's list (Kassa's own drawing: initials on a colour). */
export function walletSvg(appName: string): string | null {
  const badge = WALLET_BADGES[appName];
  return badge ? badgeSvg(badge.label, badge.colour) : null;
}

const svgDataUrl = (svg: string): string => `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;

/** Telegram's paper plane on its blue disc, drawn here (the wallet list's "Wallet in Telegram"). */
const TELEGRAM_MARK =
  '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64"><circle cx="32" cy="32" r="32" fill="#2AABEE"/><path d="M14.5 31.2 46.3 18.9c1.5-.5 2.8.4 2.3 2.6l-5.4 25.5c-.4 1.8-1.5 2.2-3 1.4l-8.3-6.1-4 3.9c-.4.4-.8.8-1.7.8l.6-8.5 15.4-13.9c.7-.6-.1-.9-1-.3L22.2 36.3l-8.2-2.6c-1.8-.6-1.8-1.8.5-2.5z" fill="#fff"/></svg>';
/** A wallet with no drawing of its own: a plain wallet mark. */
const WALLET_MARK =
  '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" fill="#5F6B7A"/><rect x="14" y="20" width="36" height="26" rx="5" fill="none" stroke="#fff" stroke-width="3.5"/><rect x="36" y="29" width="14" height="8" rx="3" fill="#fff"/></svg>';

/**
 * What TON Connect's UI bundle shows for an image address it holds (static.ts rewrites each in the
 * bundle): the TON mark for its TON icon, Telegram's for its Telegram icon, a wallet's own badge
 * when Kassa offers that wallet (by the host of its icon), else a plain wallet mark — always a
 * data: URL of Kassa's own drawing, never the third-party address.
 */
export function tonConnectImage(url: string): string {
  const file = url.split('/').pop() ?? '';
  if (/^ton-icon/.test(file)) return svgDataUrl(coinSvg('TON'));
  if (/^tg\.png$/.test(file)) return svgDataUrl(TELEGRAM_MARK);
  const host = new URL(url).hostname;
  const offered = host.endsWith('tonkeeper.com')
    ? 'tonkeeper'
    : host.endsWith('mytonwallet.io')
      ? 'mytonwallet'
      : host.endsWith('tonhub.com')
        ? 'tonhub'
        : null;
  const badge = offered ? walletSvg(offered) : null;
  return svgDataUrl(badge ?? WALLET_MARK);
}

// ---- The manifest icon: a 180×180 PNG (wallets do not take SVG), drawn once here.

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = crcTable[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** Kassa's mark: a white ring (a coin) on a blue rounded square, 180×180 RGBA. */
function drawIcon(size = 180): Buffer {
  const rows: Buffer[] = [];
  const radius = 36;
  for (let y = 0; y < size; y += 1) {
    const row = Buffer.alloc(1 + size * 4);
    for (let x = 0; x < size; x += 1) {
      // Rounded square mask.
      const cx = Math.min(Math.max(x + 0.5, radius), size - radius);
      const cy = Math.min(Math.max(y + 0.5, radius), size - radius);
      const inside = Math.hypot(x + 0.5 - cx, y + 0.5 - cy) <= radius;
      const d = Math.hypot(x + 0.5 - size / 2, y + 0.5 - size / 2);
      const ring = d >= 44 && d <= 62;
      const dot = d <= 18;
      const [r, g, b] = ring || dot ? [255, 255, 255] : [0, 110, 200];
      row.set([r, g, b, inside ? 255 : 0], 1 + x * 4);
    }
    rows.push(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8-bit RGBA
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', header),
    chunk('IDAT', zlib.deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

export const KASSA_ICON_PNG: Buffer = drawIcon();
