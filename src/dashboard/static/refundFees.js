// Kassa dashboard: "Send … from your wallet" for a refund fee top-up (the Money page, issue 47
// item 3). Kassa built the TON Connect request (the button's data-request: one message to Kassa's fee
// wallet, its comment the top-up's reference); TON Connect's UI (the checkout's own bundle,
// tonconnect-ui.js, loaded before this script) connects the owner's wallet — any account of it — and
// asks it to send. Nothing is counted here: the chain reader books what arrives with the reference,
// each time it arrives, and the page (reloaded) shows it.
(() => {
  const place = document.getElementById('refund-fees-wallet');
  const lib = window.TON_CONNECT_UI;
  if (!place || !lib || !window.KASSA_WALLET) return;
  const { connectUi, connected } = window.KASSA_WALLET(place);
  const say = (item, text, kind) => {
    const status = item.querySelector('.sign-status');
    if (!status) return;
    status.textContent = text;
    status.className = `sign-status ${kind}`;
  };

  const send = (button) => {
    const item = button.closest('.top-up');
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
      say(item, 'TON Connect could not start: use the link below.', 'problem');
      return;
    }
    connected(tc)
      .then(() => tc.sendTransaction(request))
      .then(() => {
        button.removeAttribute('aria-busy');
        button.textContent = 'Sent';
        say(item, 'Sent from your wallet: it is added to the balance once the network shows it (about a minute).', 'success');
        window.setTimeout(() => window.location.reload(), 8000);
      })
      .catch((error) => {
        button.removeAttribute('aria-busy');
        button.disabled = false;
        if (error?.message === 'closed') return say(item, '', 'info');
        if (error instanceof lib.UserRejectsError) return say(item, 'Your wallet declined it: nothing was sent.', 'problem');
        // The dialog closed or the wallet did not answer: it may still send. Sent twice, both are added (nothing is lost).
        say(
          item,
          'Your wallet did not confirm. If it sent the money anyway, it is added once the network shows it: reload in a minute before sending again.',
          'problem',
        );
      });
  };
  try {
    connectUi();
  } catch {
    // TON Connect could not start: a click says so and offers the link.
  }
  for (const button of document.querySelectorAll('button.send-top-up')) button.addEventListener('click', () => send(button));
})();
