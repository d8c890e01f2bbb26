// Kassa dashboard: the owner's wallet through TON Connect, for the pages that ask a wallet to send
// (treasury.js: a refund from the treasury; refundFees.js: a refund fee top-up). TON Connect's UI is
// the checkout's own bundle (tonconnect-ui.js), loaded before this script; `place` is the element that
// carries the manifest's and the wallet list's addresses (data-manifest, data-wallets).
// `connectUi()` makes the UI once (it throws when TON Connect cannot start); `connected(ui)` resolves
// once a wallet is connected (opening the wallet list if none is), and rejects with "closed" when the
// person closes the list without connecting one.
window.KASSA_WALLET = (place) => {
  const lib = window.TON_CONNECT_UI;
  let ui = null;
  const connectUi = () => {
    if (ui) return ui;
    const connector = new lib.TonConnect({
      manifestUrl: new URL(place.getAttribute('data-manifest'), window.location.href).href,
      walletsListSource: new URL(place.getAttribute('data-wallets'), window.location.href).href,
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
  return { connectUi, connected };
};
