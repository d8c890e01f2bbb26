// A minimal Kassa webhook receiver, with nothing but node:http and the receiver kit.
//
//   KASSA_KEYS_URL=http://127.0.0.1:3000/pay/v1/webhook/keys KASSA_STORE_ID=<your store id> PORT=8080 npx node examples/webhook-receiver.ts
//
// KASSA_STORE_ID is your store's id (`kassa store create` printed it as `id`). Every store of a Kassa
// is signed with the same keys, so the signature alone does not say the webhook is yours: another
// store's payment can name this receiver as its webhookURL, with your order_id. The kit checks the
// store Kassa names inside the signed body (`payload.storeID`) and answers 403 to another store's.
//
// (`npx node` is the project's Node 24, which runs TypeScript; an older system Node does not.)
// Then create payments with "webhookURL": "https://your-host/kassa/webhook" (with
// WEBHOOK_ALLOW_INSECURE=true on a development Kassa, http://127.0.0.1:8080/kassa/webhook works).
//
// It answers 200 only after the webhook is verified and processed, 400/401 when the request is not a
// genuine webhook, 403 when it is another store's, 500 when the key set cannot be fetched or processing fails — Kassa retries every
// non-200 answer for up to 12 hours, so a 500 is how you ask for the webhook again later.
//
// In your own project, install the kit, `kassa-webhooks` (packages/webhooks; README, "Webhooks"),
// and import it instead of ../src:
//
//   import { createWebhookVerifier, type WebhookPayload } from 'kassa-webhooks';
//
// `kassa-webhooks` is plain JavaScript with type declarations, needs Node 20+ and nothing but Node
// built-ins. Or copy src/webhooks/receiver.ts: it is one self-contained file.
import http from 'node:http';
import { createWebhookVerifier, type WebhookPayload } from '../src/webhooks/receiver.ts';

const keysUrl = process.env.KASSA_KEYS_URL;
if (keysUrl === undefined || keysUrl === '') {
  console.error('KASSA_KEYS_URL is required, e.g. https://pay.example.com/pay/v1/webhook/keys');
  process.exit(1);
}
const storeID = process.env.KASSA_STORE_ID;
if (storeID === undefined || storeID === '') {
  console.error("KASSA_STORE_ID is required: your store's id (kassa store create printed it as id)");
  process.exit(1);
}
const port = Number(process.env.PORT ?? 8080);
const MAX_BODY_BYTES = 64 * 1024;

// One verifier for the whole process: it caches the key set (6 h) and remembers processed payments.
// The default memory of processed payments is lost on restart; pass `seen: yourDatabaseStore` in
// production so that a redelivery after a restart is recognised as a duplicate.
// storeID: a webhook for another store of the same Kassa is rejected (403) before anything below runs.
const verifier = createWebhookVerifier({ keysUrl, storeID });

/** Your business logic. Make it idempotent too: a duplicate can slip past a restart. */
async function onPaymentCompleted(payload: WebhookPayload): Promise<void> {
  console.log(JSON.stringify({ msg: 'payment completed', paymentID: payload.paymentID, orderId: payload.order_id ?? null, metadata: payload.metadata }));
}

function readRawBody(req: http.IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        resolve(null);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function answer(res: http.ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

const server = http.createServer((req, res) => {
  void (async () => {
    if (req.method !== 'POST') return answer(res, 405, { error: 'POST only' });
    const raw = await readRawBody(req); // the exact bytes: the signature covers them, not a re-serialisation
    if (raw === null) return answer(res, 413, { error: 'body too large' });

    // verify → skip duplicates → process → remember → 200 (see the kit's JSDoc).
    const result = await verifier.verify(raw, req.headers);
    if (!result.ok) {
      console.error(JSON.stringify({ msg: 'webhook rejected', status: result.status, reason: result.reason }));
      return answer(res, result.status, { error: result.reason });
    }
    if (result.duplicate) return answer(res, 200, { ok: true, duplicate: true });
    try {
      // A store endpoint's event (docs/API.md, Store webhook endpoints), or a payment's completed webhook.
      if (result.event !== undefined) console.log(JSON.stringify({ msg: 'event', type: result.event.type, eventID: result.event.eventID }));
      else await onPaymentCompleted(result.payload);
    } catch (err) {
      console.error(JSON.stringify({ msg: 'processing failed', error: String(err) }));
      return answer(res, 500, { error: 'processing failed' });
    }
    await verifier.markProcessed(result.event !== undefined ? result.event.eventID : result.payload.paymentID);
    return answer(res, 200, { ok: true });
  })().catch((err: unknown) => {
    console.error(JSON.stringify({ msg: 'unexpected error', error: String(err) }));
    if (!res.headersSent) answer(res, 500, { error: 'internal error' });
  });
});

server.listen(port, () => {
  const address = server.address();
  const actual = typeof address === 'object' && address !== null ? address.port : port;
  console.log(JSON.stringify({ msg: 'webhook receiver listening', port: actual, keysUrl, storeID }));
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
