// Kassa dashboard: "Sign with your wallet" for a refund from the store's treasury (a payment's
// page). Kassa built the TON Connect request (the button's data-request); TON Connect's UI (the
// checkout's own bundle, tonconnect-ui.js, loaded before this script) connects the treasury's
// wallet and asks it to sign. The button is disabled from the first click on: a request signed
// twice pays twice, so a second click never asks the wallet again. The refund turns confirmed on
// the page once the chain reader sees the transfer leave the treasury (the page is reloaded).
(() => {
  const section = document.getElementById('treasury-refunds');
  const lib = window.TON_CONNECT_UI;
  if (!section || !lib) return;
  let ui = null;
  const connectUi = () => {
    if (ui) return ui;
    const connector = new lib.TonConnect({
      manifestUrl: new URL(section.getAttribute('data-manifest'), window.location.href).href,
      walletsListSource: new URL(section.getAttribute('data-wallets'), window.location.href).href,
      analytics: { mode: 'off' },
    });
    ui = new lib.TonConnectUI({
      connector,
      analytics: { mode: 'off' },
      actionsConfiguration: { returnStrategy: 'back', modals: ['before'], notifications: [] },
    });
    return ui;
  };
  const connected = (tc) =>
    new Promise((resolve, reject) => {
      if (tc.connected) return resolve();
      const stopStatus = tc.onStatusChange((wallet) => {
        if (wallet) {
          stopStatus();
          stopModal();
          resolve();
        }
      });
      const stopModal = tc.onModalStateChange((state) => {
        if (state.status === 'closed' && !tc.connected) {
          stopStatus();
          stopModal();
          reject(new Error('closed'));
        }
      });
      tc.openModal();
    });
  const say = (item, text, kind) => {
    const status = item.querySelector('.sign-status');
    if (!status) return;
    status.textContent = text;
    status.className = `sign-status ${kind}`;
  };
  const sign = (button) => {
    const item = button.closest('.treasury-refund');
    if (!item || button.disabled) return;
    const request = JSON.parse(button.getAttribute('data-request'));
    button.disabled = true;
    button.setAttribute('aria-busy', 'true');
    say(item, 'Waiting for your wallet…', 'info');
    let tc;
    try {
      tc = connectUi();
    } catch {
      button.disabled = false;
      button.removeAttribute('aria-busy');
      say(item, 'TON Connect could not start: use the "Open in a wallet app" link.', 'problem');
      return;
    }
    connected(tc)
      .then(() => tc.sendTransaction(request))
      .then(() => {
        button.removeAttribute('aria-busy');
        button.textContent = 'Signed';
        say(item, 'Signed and sent from your wallet: the refund is confirmed once the chain shows it.', 'success');
        window.setTimeout(() => window.location.reload(), 8000);
      })
      .catch((error) => {
        button.removeAttribute('aria-busy');
        // Nothing was signed (the list closed, the wallet declined or failed): it may be asked again.
        button.disabled = false;
        if (error?.message === 'closed') return say(item, '', 'info');
        const declined = error instanceof lib.UserRejectsError || /reject|declin/i.test(String(error?.message));
        say(
          item,
          declined ? 'Your wallet declined: nothing was sent.' : 'Your wallet did not sign it: nothing was sent. Try again, or use the link.',
          'problem',
        );
      });
  };
  // Started with the page (as the checkout's): a wallet connected before is restored, and the list opens at once on a click.
  try {
    connectUi();
  } catch {
    ui = null;
  }
  for (const button of section.querySelectorAll('button.sign-treasury')) button.addEventListener('click', () => sign(button));
})();
