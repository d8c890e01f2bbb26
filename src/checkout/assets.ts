// Coin and chain badges served by Kassa itself (no third-party assets): a coloured disc with the
// ticker, generated as SVG.
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

export function badgeSvg(symbol: string): string {
  const colour = COLOURS[symbol] ?? '#555555';
  const label = escapeXml(symbol.slice(0, 5));
  const size = label.length > 3 ? 13 : 16;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64" role="img" aria-label="${label}"><circle cx="32" cy="32" r="32" fill="${colour}"/><text x="32" y="37" font-family="system-ui,sans-serif" font-size="${size}" font-weight="700" text-anchor="middle" fill="#fff">${label}</text></svg>`;
}
