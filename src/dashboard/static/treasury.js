// Kassa dashboard: "Sign with your wallet" for a refund from the store's treasury (a payment's
// page, and unmatched money given back on the Unmatched money page: dashboard/treasurySigning.ts). Kassa built the TON Connect request (the button's data-request); TON Connect's UI (the
// checkout's own bundle, tonconnect-ui.js, and walletConnect.js, loaded before this script) connects the treasury's
// wallet and asks it to sign. One refund, one request (issue 44): a request handed to a wallet can
// be signed there until the refund's data-held-until (validUntil + the longest lifetime a wallet
// signs + the late-commit margin) even when TON Connect's "confirm in your wallet" dialog was closed
// (@tonconnect/ui then rejects "Transaction was not sent" although the wallet holds it). So the page
// offers no second request for it — not after that rejection, not after a reload, not in another
// browser or device: the server records the hand-over first (the first recording wins, another is
// refused) and every page load reads it — until the wallet itself refuses (UserRejectsError, reported
// to the server, which frees it) or the request can no longer land. Before asking, the connected account is compared with the request's `from` (the
// treasury): another wallet is named, and the owner is offered to connect the treasury's instead.
// The refund turns confirmed on the page once the chain reader sees the transfer (the page is reloaded).
(() => {
  const section = document.getElementById('treasury-refunds');
  const lib = window.TON_CONNECT_UI;
  if (!section || !lib || !window.KASSA_WALLET) return;
  const { connectUi, connected } = window.KASSA_WALLET(section);

  // ---- a request handed to a wallet: the server knows (every browser and device of the store) --
  // The page records handing the request over (POST …/request-sent) before it does; the first
  // recording wins and another page is refused (409) with until when the held one can land. The
  // page loaded says so itself (data-request-sent): nothing here decides from this browser alone.
  const heldUntil = (item) => Date.parse(item.getAttribute('data-held-until'));
  const post = (url) =>
    window.fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: '',
    });
  const record = async (item) => {
    let response;
    try {
      response = await post(item.getAttribute('data-record'));
    } catch {
      // Kassa did not answer: nothing was handed to a wallet.
      throw new Error('not recorded');
    }
    let body = {};
    try {
      body = await response.json();
    } catch {}
    if (response.ok) return;
    const error = new Error(response.status === 409 && body.problem === 'request_in_wallet' ? 'held' : 'not recorded');
    error.heldUntil = body.heldUntil ? Date.parse(body.heldUntil) : null;
    error.text = body.message;
    throw error;
  };
  const declined = (item) => post(item.getAttribute('data-declined')).catch(() => {});
  const when = (ms) => new Date(ms).toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
  const pendingWords = (item, until) =>
    `The request is already in a wallet, which can still pay it until ${when(until ?? heldUntil(item))}: approve or decline it there. ` +
    'Do not send it again — a second request would pay the customer twice. ' +
    'If it was declined in the wallet, the refund is marked expired at that time and can then be asked again.';

  const say = (item, text, kind) => {
    const status = item.querySelector('.sign-status');
    if (!status) return;
    status.textContent = text;
    status.className = `sign-status ${kind}`;
  };
  const reconnectButton = (item, show) => {
    let button = item.querySelector('button.reconnect-treasury');
    if (!show) return button?.remove();
    if (button) return button;
    button = document.createElement('button');
    button.type = 'button';
    button.className = 'reconnect-treasury';
    button.textContent = "Disconnect it and connect the treasury's wallet";
    item.querySelector('.sign-status')?.after(button);
    return button;
  };
  const friendly = (raw) => {
    try {
      return lib.toUserFriendlyAddress(raw, false);
    } catch {
      return raw;
    }
  };
  const sameAccount = (a, b) => String(a).toLowerCase() === String(b).toLowerCase();

  const sign = (button) => {
    const item = button.closest('.treasury-refund');
    if (!item || button.disabled) return;
    const request = JSON.parse(button.getAttribute('data-request'));
    button.disabled = true;
    button.setAttribute('aria-busy', 'true');
    reconnectButton(item, false);
    say(item, 'Waiting for your wallet…', 'info');
    let tc;
    try {
      tc = connectUi();
    } catch {
      button.disabled = false;
      button.removeAttribute('aria-busy');
      say(item, 'TON Connect could not start: use the link below.', 'problem');
      return;
    }
    connected(tc)
      .then(() => {
        // The right wallet: the request is the treasury's; any other account would be asked for nothing it can pay.
        const account = tc.account?.address;
        if (account && !sameAccount(account, request.from)) {
          const error = new Error('wrong wallet');
          error.account = account;
          throw error;
        }
        // Recorded first: of two pages (two browsers, two devices), only the first hands it to a wallet.
        return record(item).then(() => tc.sendTransaction(request));
      })
      .then(() => {
        button.removeAttribute('aria-busy');
        button.textContent = 'Signed';
        say(item, 'Signed and sent from your wallet: the refund is confirmed once the chain shows it.', 'success');
        window.setTimeout(() => window.location.reload(), 8000);
      })
      .catch((error) => {
        button.removeAttribute('aria-busy');
        if (error?.message === 'closed') {
          // The list of wallets closed before one connected: nothing was asked.
          button.disabled = false;
          return say(item, '', 'info');
        }
        if (error?.message === 'held') {
          // Another page (another browser or device) handed it to a wallet first: no second request.
          button.disabled = true;
          return say(item, pendingWords(item, error.heldUntil), 'info');
        }
        if (error?.message === 'not recorded') {
          button.disabled = true;
          return say(item, `${error.text ?? 'Kassa could not record the request'}: nothing was sent. Reload the page.`, 'problem');
        }
        if (error?.message === 'wrong wallet') {
          button.disabled = false;
          say(
            item,
            `The connected wallet (${friendly(error.account)}) is not the store's treasury (${item.getAttribute('data-treasury')}): nothing was asked of it. Connect the treasury's wallet to sign.`,
            'problem',
          );
          reconnectButton(item, true).onclick = () => {
            reconnectButton(item, false);
            say(item, '', 'info');
            Promise.resolve(tc.disconnect())
              .catch(() => {})
              .then(() => sign(button));
          };
          return;
        }
        if (error instanceof lib.UserRejectsError) {
          // The wallet's own refusal: nothing can be signed of this request any more, so it may be asked again.
          button.disabled = true;
          say(item, 'Your wallet declined it: nothing was sent.', 'problem');
          return declined(item).then(() => {
            button.disabled = false;
            say(item, 'Your wallet declined it: nothing was sent. You can sign it again.', 'problem');
          });
        }
        // The dialog closed ("Transaction was not sent") or the wallet did not answer: the wallet may
        // still hold the request and pay it. No second request while it can.
        button.disabled = true;
        say(item, pendingWords(item), 'info');
      });
  };
  // Started with the page (as the checkout's): a wallet connected before is restored, and the list opens at once on a click.
  try {
    connectUi();
  } catch {
    // TON Connect could not start: a click says so and offers the link.
  }
  for (const button of section.querySelectorAll('button.sign-treasury')) button.addEventListener('click', () => sign(button));
})();
