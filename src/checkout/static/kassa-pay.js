// <kassa-pay>: Kassa's drop-in payment element (docs/API.md "The drop-in element"). One ES module,
// no dependencies, no build step:
//
//   <script type="module" src="{checkout_base_url}/v1/kassa-pay.js"></script>
//   <kassa-pay payment="PAYMENT_ID"></kassa-pay>   or   <kassa-pay link="LINK_ID"></kassa-pay>
//
// It holds no token: a payment id or a link id only. In its shadow DOM it shows the amount, the
// methods and the status, read from the checkout's public endpoints (answered to this page's origin
// only when the store lists it in embedOrigins), and follows the payment live through the checkout's
// event stream — never the wallet's word. Paying (the method, TON Connect, the QR code) happens in
// Kassa's own checkout, framed for this origin alone; the frame's messages are taken only from that
// frame and Kassa's origin. On each change of status it dispatches `kassa-pay:status` on the element
// (detail: {status: 'pending' | 'completed' | 'expired' | 'cancelled', paymentId}); when it cannot
// work here, `kassa-pay:error` (detail: {reason}). Theme: the --kassa-pay-* custom properties below.

const BASE = new URL('..', import.meta.url);
const KASSA_ORIGIN = BASE.origin;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ENDED = ['completed', 'expired', 'cancelled'];
const STATUS_TEXT = {
  pending: 'Waiting for the payment',
  completed: 'Paid. Thank you!',
  expired: 'This payment has expired.',
  cancelled: 'This payment was cancelled.',
};
const LINK_TEXT = {
  expired: 'This payment link has expired.',
  used_up: 'This payment link has been used up.',
  deactivated: 'This payment link is no longer active.',
};

const STYLE = `
:host {
  display: block;
  box-sizing: border-box;
  max-width: var(--kassa-pay-max-width, 28rem);
  min-width: 0;
  color: var(--kassa-pay-text, #1b1f24);
  background: var(--kassa-pay-background, #ffffff);
  border: var(--kassa-pay-border, 1px solid #c9ced6);
  border-radius: var(--kassa-pay-radius, 12px);
  font: var(--kassa-pay-font, 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif);
  overflow: hidden;
}
:host([hidden]) { display: none; }
.summary { padding: 0.9rem 1rem 0.6rem; border-top: 4px solid var(--kassa-pay-accent, #0b63ce); }
.amount { margin: 0; font-size: 1.5em; font-weight: 700; overflow-wrap: anywhere; }
.description, .methods { margin: 0.25rem 0 0; overflow-wrap: anywhere; }
.methods { color: var(--kassa-pay-muted, #4a5260); font-size: 0.9em; }
.status { margin: 0.5rem 0 0; font-weight: 600; }
.status[data-status="completed"] { color: var(--kassa-pay-success, #146c2e); }
.status[data-status="expired"], .status[data-status="cancelled"], .status[data-status="refused"] { color: var(--kassa-pay-danger, #a4161a); }
iframe { display: block; width: 100%; min-height: var(--kassa-pay-frame-min-height, 32rem); border: 0; border-top: 1px solid var(--kassa-pay-divider, #e3e6ea); background: #ffffff; }
iframe[hidden] { display: none; }
`;

let sheet = null;
function styleSheet() {
  // A constructed stylesheet: nothing inline, so the host page's CSP needs no 'unsafe-inline'.
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(STYLE);
  }
  return sheet;
}

function element(tag, attributes = {}, text = null) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text !== null) node.textContent = text;
  return node;
}

/** What the shop's page is told: created and pending are both "pending" (waiting for the customer). */
const publicStatus = (status) => (status === 'created' ? 'pending' : status);

/** A ticker as people read it: the TON network's own coin is Gram (GRAM) since June 2026; the API keeps TON. */
const ticker = (symbol) => (symbol === 'TON' ? 'GRAM' : symbol);
/** A coin named where the customer chooses: Gram with its former name. */
const coinName = (symbol) => (symbol === 'TON' ? 'Gram (GRAM), formerly Toncoin' : symbol);

class KassaPay extends HTMLElement {
  static observedAttributes = ['payment', 'link', 'lang'];

  #generation = 0;
  #events = null;
  #paymentId = null;
  #status = null;
  #view = {};
  #parts = null;
  #onMessage = (event) => this.#message(event);

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    root.adoptedStyleSheets = [styleSheet()];
  }

  connectedCallback() {
    window.addEventListener('message', this.#onMessage);
    this.#start();
  }

  disconnectedCallback() {
    window.removeEventListener('message', this.#onMessage);
    this.#stop();
  }

  attributeChangedCallback(_name, before, after) {
    if (before !== after && this.isConnected) this.#start();
  }

  #stop() {
    this.#generation += 1;
    if (this.#events) this.#events.close();
    this.#events = null;
  }

  #render() {
    const section = element('section', { part: 'container', 'aria-label': 'Payment' });
    const summary = element('div', { class: 'summary', part: 'summary' });
    const amount = element('p', { class: 'amount', part: 'amount' });
    const description = element('p', { class: 'description', part: 'description' });
    const methods = element('p', { class: 'methods', part: 'methods' });
    const status = element('p', { class: 'status', part: 'status', role: 'status', 'aria-live': 'polite' });
    description.hidden = true;
    methods.hidden = true;
    summary.append(amount, description, methods, status);
    const frame = element('iframe', { part: 'frame', title: 'Pay with TON', loading: 'lazy', referrerpolicy: 'no-referrer' });
    frame.hidden = true;
    section.append(summary, frame);
    this.shadowRoot.replaceChildren(section);
    this.#parts = { amount, description, methods, status, frame };
  }

  async #start() {
    this.#stop();
    const generation = this.#generation;
    this.#paymentId = null;
    this.#status = null;
    this.#render();
    this.#parts.amount.textContent = 'Loading…';
    const payment = this.getAttribute('payment');
    const link = this.getAttribute('link');
    if (payment && UUID.test(payment)) return this.#follow(payment.toLowerCase(), generation, true);
    if (link && UUID.test(link)) return this.#openLink(link.toLowerCase(), generation);
    this.#refuse('invalid_id', 'This payment element has no valid payment or link id.');
  }

  #frameUrl(path) {
    const url = new URL(path, BASE);
    url.searchParams.set('embed', window.location.origin);
    const lang = this.getAttribute('lang');
    if (lang && /^[a-z]{2}$/.test(lang)) url.searchParams.set('lang', lang);
    return url.href;
  }

  async #read(path) {
    let response;
    try {
      response = await fetch(new URL(path, BASE), { credentials: 'omit', cache: 'no-store', referrerPolicy: 'no-referrer' });
    } catch {
      // A CORS refusal looks like a network failure: this origin is not in the store's embedOrigins, or Kassa is unreachable.
      return { refused: true };
    }
    if (!response.ok) return { status: response.status };
    return { body: await response.json() };
  }

  async #openLink(linkId, generation) {
    const read = await this.#read(`v1/checkout/links/${linkId}`);
    if (generation !== this.#generation) return;
    if (read.refused) return this.#refuse('origin_not_allowed', 'This page may not take payments here: its address is not allowed by the store.');
    if (!read.body) return this.#refuse('not_found', 'This payment link does not exist.');
    const view = read.body;
    this.#showAmount(view.amount ?? null, view.currency, view.description);
    if (view.state !== 'open') return this.#refuse(view.state, LINK_TEXT[view.state] ?? 'This payment link takes no payment.');
    // A payment this browser already started from the link, still open, is shown again (no new payment on a reload).
    const key = `kassa-pay:link:${linkId}`;
    let held = null;
    try {
      held = window.sessionStorage.getItem(key);
    } catch {
      held = null;
    }
    if (held && UUID.test(held)) {
      const again = await this.#read(`v1/checkout/payments/${held}`);
      if (generation !== this.#generation) return;
      if (again.body && !ENDED.includes(again.body.status) && Date.parse(again.body.timer.expiresAt) > Date.now()) return this.#follow(held, generation, true);
    }
    // The link's own page in the frame: the person's press of its button makes the payment (an open amount typed first); its frame says which.
    this.#linkKey = key;
    this.#showFrame(this.#frameUrl(`l/${linkId}`));
  }

  #linkKey = null;

  #showAmount(amount, currency, description) {
    const { amount: amountNode, description: descriptionNode } = this.#parts;
    amountNode.textContent = amount ? `${amount} ${ticker(currency)}` : `Amount in ${ticker(currency)}`;
    if (description) {
      descriptionNode.textContent = description;
      descriptionNode.hidden = false;
    }
  }

  #showFrame(src) {
    const frame = this.#parts.frame;
    if (frame.getAttribute('src') !== src) frame.setAttribute('src', src);
    frame.hidden = false;
  }

  async #follow(paymentId, generation, withFrame) {
    this.#paymentId = paymentId;
    const read = await this.#read(`v1/checkout/payments/${paymentId}`);
    if (generation !== this.#generation) return;
    if (read.refused) return this.#refuse('origin_not_allowed', 'This page may not take payments here: its address is not allowed by the store.');
    if (!read.body) return this.#refuse('not_found', 'This payment does not exist.');
    this.#update(read.body);
    if (withFrame && !ENDED.includes(read.body.status)) this.#showFrame(this.#frameUrl(paymentId));
    this.#listMethods(paymentId, generation);
    if (ENDED.includes(read.body.status)) return;
    const events = new EventSource(new URL(`v1/checkout/payments/${paymentId}/events`, BASE));
    this.#events = events;
    events.addEventListener('payment', (event) => {
      if (generation !== this.#generation) return events.close();
      let view;
      try {
        view = JSON.parse(event.data);
      } catch {
        return;
      }
      if (view.id !== paymentId) return;
      this.#update(view);
      if (ENDED.includes(view.status)) events.close();
    });
  }

  async #listMethods(paymentId, generation) {
    const node = this.#parts.methods;
    if (this.#showChosen(this.#view.paymentDetails)) return;
    const read = await this.#read(`v1/checkout/payments/${paymentId}/methods`);
    if (generation !== this.#generation || !read.body || this.#view.paymentDetails) return;
    const names = read.body.data.map((method) => (method.coinAmount ? `${method.coinAmount} ${ticker(method.coin)}` : coinName(method.coin)));
    if (names.length) {
      node.textContent = `Pay with ${names.join(' or ')}`;
      node.hidden = false;
    }
  }

  /** The method chosen (paymentDetails: coin and chain objects, the exact coin amount); false when none yet. */
  #showChosen(details) {
    if (!details || !details.coin || typeof details.coin.symbol !== 'string') return false;
    const chain = details.chain && details.chain.name ? ` on ${details.chain.name}` : '';
    this.#parts.methods.textContent = `Pay ${details.coinAmount} ${ticker(details.coin.symbol)}${chain}`;
    this.#parts.methods.hidden = false;
    return true;
  }

  #update(view) {
    this.#view = view;
    this.#showAmount(view.amount, view.currency, view.description);
    this.#showChosen(view.paymentDetails);
    const status = publicStatus(view.status);
    const node = this.#parts.status;
    node.dataset.status = status;
    node.textContent = STATUS_TEXT[status] ?? '';
    if (status !== this.#status) {
      this.#status = status;
      this.dispatchEvent(new CustomEvent('kassa-pay:status', { bubbles: true, composed: true, detail: { status, paymentId: view.id } }));
    }
  }

  #refuse(reason, text) {
    this.#stop();
    const { amount, status, frame } = this.#parts;
    if (amount.textContent === 'Loading…') amount.textContent = 'Payment';
    status.dataset.status = 'refused';
    status.textContent = text;
    frame.hidden = true;
    frame.removeAttribute('src');
    this.dispatchEvent(new CustomEvent('kassa-pay:error', { bubbles: true, composed: true, detail: { reason } }));
  }

  /** The framed checkout's messages: from that frame and Kassa's origin only, in the shape embed.js sends. */
  #message(event) {
    const frame = this.#parts?.frame;
    if (!frame || event.origin !== KASSA_ORIGIN || event.source !== frame.contentWindow) return;
    const data = event.data;
    if (!data || typeof data !== 'object' || data.source !== 'kassa-pay') return;
    if (data.type === 'height' && Number.isFinite(data.height)) {
      frame.style.height = `${Math.min(Math.max(Math.round(data.height), 200), 4000)}px`;
    } else if (data.type === 'payment' && typeof data.paymentId === 'string' && UUID.test(data.paymentId)) {
      const paymentId = data.paymentId.toLowerCase();
      if (paymentId === this.#paymentId) return;
      if (this.#linkKey) {
        try {
          window.sessionStorage.setItem(this.#linkKey, paymentId);
        } catch {
          // No storage: a reload shows the link again.
        }
      }
      if (this.#events) this.#events.close();
      this.#events = null;
      this.#follow(paymentId, this.#generation, false);
    }
  }
}

if (!customElements.get('kassa-pay')) customElements.define('kassa-pay', KassaPay);
