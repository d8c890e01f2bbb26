// The two public price sources imitated on loopback: tonapi's /v2/rates and a CoinGecko-compatible
// /api/v3/simple/price. Each answers what the test sets (`prices`, or a whole `reply`) and records
// what it was asked.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  url: URL;
  headers: http.IncomingHttpHeaders;
}

type Reply = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export function sendJson(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(body);
}

/** USD, EUR and RUB prices as JSON number literals (exact text, e.g. "5.1"). */
export type Quote = { usd: string; eur?: string; rub?: string };

abstract class LoopbackSource {
  seen: SeenRequest[] = [];
  reply: Reply | null = null;
  url = '';
  private server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://loopback');
    this.seen.push({ url, headers: req.headers });
    if (this.reply) this.reply(req, res);
    else this.answer(url, res);
  });
  protected abstract answer(url: URL, res: http.ServerResponse): void;
  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }
  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** tonapi.io's GET /v2/rates?tokens=ton,<raw masters>&currencies=usd,eur,rub. `prices` is keyed by `TON` or raw master. */
export class LoopbackTonapi extends LoopbackSource {
  prices = new Map<string, Quote>();
  protected answer(url: URL, res: http.ServerResponse): void {
    if (url.pathname !== '/v2/rates') {
      sendJson(res, 404, '{"error":"not found"}');
      return;
    }
    const asked = (url.searchParams.get('tokens') ?? '').split(',');
    const entries = asked.flatMap((token) => {
      const quote = this.prices.get(token === 'ton' ? 'TON' : token);
      if (!quote) return [];
      return [`"${token === 'ton' ? 'TON' : token}":{"prices":{"USD":${quote.usd},"EUR":${quote.eur ?? 0},"RUB":${quote.rub ?? 0}}}`];
    });
    sendJson(res, 200, `{"rates":{${entries.join(',')}}}`);
  }
}

/** CoinGecko's GET /api/v3/simple/price?ids=…&vs_currencies=usd,eur,rub&include_last_updated_at=true. `prices` is keyed by id. */
export class LoopbackCoingecko extends LoopbackSource {
  prices = new Map<string, Quote>();
  /** Unix seconds given as every coin's last_updated_at; null: the field is left out. */
  lastUpdatedAt: number | null = null;
  protected answer(url: URL, res: http.ServerResponse): void {
    if (url.pathname !== '/api/v3/simple/price') {
      sendJson(res, 404, '{"error":"Not Found"}');
      return;
    }
    const ids = (url.searchParams.get('ids') ?? '').split(',');
    const entries = ids.flatMap((id) => {
      const quote = this.prices.get(id);
      if (!quote) return [];
      const fields = [`"usd":${quote.usd}`, ...(quote.eur ? [`"eur":${quote.eur}`] : []), ...(quote.rub ? [`"rub":${quote.rub}`] : [])];
      if (this.lastUpdatedAt !== null) fields.push(`"last_updated_at":${this.lastUpdatedAt}`);
      return [`"${id}":{${fields.join(',')}}`];
    });
    sendJson(res, 200, `{${entries.join(',')}}`);
  }
}
