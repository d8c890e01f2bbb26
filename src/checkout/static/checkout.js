// Kassa hosted checkout: the page's only script (served from 'self', no framework, no inline code).
// - counts down to expiresAt (corrected by the server's clock),
// - lets the customer choose a method (POST …/method),
// - listens for status changes (server-sent events, else polling the public JSON view) and, when the
//   payment changes, fetches the page again and swaps #checkout in place: no reload, one renderer.
(function () {
  'use strict';

  var dataElement = document.getElementById('kassa-data');
  if (!dataElement) return;
  var data = JSON.parse(dataElement.textContent || '{}');
  var ENDED = ['completed', 'expired', 'cancelled'];
  var clockOffset = typeof data.serverNow === 'number' ? data.serverNow - Date.now() : 0;
  var messages = data.messages || {};
  var ended = !!data.ended;

  function message(key) {
    return messages[key] || messages.err_generic || key;
  }
  function root() {
    return document.getElementById('checkout');
  }
  function announce(text) {
    var region = document.getElementById('announce');
    if (!region) return;
    region.textContent = '';
    window.setTimeout(function () {
      region.textContent = text;
    }, 60);
  }
  function notice(text, kind) {
    var box = document.getElementById('notice');
    if (!box) return;
    if (!text) {
      box.hidden = true;
      box.textContent = '';
      return;
    }
    box.className = 'notice' + (kind === 'info' ? ' info' : '');
    box.textContent = text;
    box.hidden = false;
  }

  // ---- Re-rendering: fetch this page again and swap #checkout.
  var refreshing = false;
  var refreshAgain = false;
  var staleRetries = 0;
  var latestKey = null;

  function keyOf(view) {
    var details = view.paymentDetails || {};
    return view.status + '|' + (details.receivedAmount || '0') + '|' + (details.address || '');
  }

  function refresh() {
    if (refreshing) {
      refreshAgain = true;
      return;
    }
    refreshing = true;
    refreshAgain = false;
    fetch(window.location.href, { headers: { Accept: 'text/html' }, cache: 'no-store', credentials: 'same-origin' })
      .then(function (response) {
        if (!response.ok) throw new Error('HTTP ' + response.status);
        return response.text();
      })
      .then(function (text) {
        // Without its <style> element: it carries that response's CSP nonce, not this page's.
        var doc = new DOMParser().parseFromString(text.replace(/<style[^>]*>[^<]*<\/style>/g, ''), 'text/html');
        var next = doc.getElementById('checkout');
        var current = root();
        if (!next || !current) return;
        var hadFocus = current.contains(document.activeElement);
        var statusChanged = next.getAttribute('data-status') !== current.getAttribute('data-status');
        current.replaceWith(document.importNode(next, true));
        if (next.getAttribute('data-ended') === 'true') {
          ended = true;
          stopLive();
          notice(''); // e.g. "sent, confirming": the page itself now says what happened
        }
        localTimes();
        showTonConnect();
        var title = document.getElementById('state-title');
        if (statusChanged && title) {
          announce(title.textContent || '');
          if (hadFocus) title.focus();
        }
        tick();
      })
      .catch(function () {
        /* The next event or poll tries again. */
      })
      .then(function () {
        refreshing = false;
        var current = root();
        var stale = latestKey && current && current.getAttribute('data-key') !== latestKey;
        // Still behind the latest view (a change during the fetch, or a failed fetch): again, a few times.
        if (stale && !ended && staleRetries < 5) {
          staleRetries += 1;
          window.setTimeout(refresh, refreshAgain ? 300 : 1500);
        } else if (!stale) {
          staleRetries = 0;
        }
        refreshAgain = false;
      });
  }

  function onView(view) {
    if (!view || typeof view.status !== 'string') return;
    latestKey = keyOf(view);
    var current = root();
    if (current && current.getAttribute('data-key') !== latestKey) refresh();
    if (ENDED.indexOf(view.status) !== -1) stopLive();
  }

  // ---- Countdown.
  var timeUpRefreshes = 0;
  function pad(n) {
    return (n < 10 ? '0' : '') + n;
  }
  function format(ms) {
    var total = Math.max(0, Math.floor(ms / 1000));
    var hours = Math.floor(total / 3600);
    var minutes = Math.floor((total % 3600) / 60);
    var seconds = total % 60;
    return hours > 0 ? hours + ':' + pad(minutes) + ':' + pad(seconds) : pad(minutes) + ':' + pad(seconds);
  }
  function tick() {
    var element = document.getElementById('countdown');
    if (!element) return;
    var left = Date.parse(element.getAttribute('data-expires-at')) - (Date.now() + clockOffset);
    if (left > 0) {
      element.textContent = format(left);
      warnExpiry(left);
      return;
    }
    element.textContent = message('timeUp');
    if (timeUpRefreshes < 3) {
      timeUpRefreshes += 1;
      window.setTimeout(refresh, 1000 * timeUpRefreshes);
    }
  }
  // Less than 5 minutes left: show the warning, and tell screen readers (politely) at 5 and 1 minute.
  var announcedMinutes = {};
  function warnExpiry(left) {
    var warning = document.getElementById('expiry-warning');
    if (warning && left < 5 * 60000) warning.hidden = false;
    var minutes = Math.ceil(left / 60000);
    if ((minutes === 5 || minutes === 1) && !announcedMinutes[minutes] && left < minutes * 60000) {
      announcedMinutes[minutes] = true;
      announce(minutes === 1 ? message('oneMinuteLeft') : message('minutesLeft').replace('{minutes}', String(minutes)));
    }
  }
  // The paid time in the customer's own time zone (the server writes UTC).
  function localTimes() {
    var paid = document.getElementById('paid-at');
    if (!paid || !window.Intl) return;
    try {
      paid.textContent = new Intl.DateTimeFormat(document.documentElement.lang === 'ru' ? 'ru-RU' : 'en-GB', { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(paid.getAttribute('datetime')));
    } catch (e) {
      /* keep the UTC text */
    }
  }
  window.setInterval(tick, 1000);
  tick();
  localTimes();

  // ---- Live status: server-sent events, with polling as the fallback.
  var source = null;
  var pollTimer = null;
  var pollDelay = 3000;

  function stopLive() {
    if (source) {
      source.close();
      source = null;
    }
    if (pollTimer) {
      window.clearTimeout(pollTimer);
      pollTimer = null;
    }
  }

  function poll() {
    pollTimer = null;
    if (ended) return;
    fetch(data.endpoints.view, { headers: { Accept: 'application/json' }, cache: 'no-store', credentials: 'same-origin' })
      .then(function (response) {
        if (response.status === 429) {
          pollDelay = Math.min(pollDelay * 2, 30000);
          return null;
        }
        pollDelay = 3000;
        return response.ok ? response.json() : null;
      })
      .then(function (view) {
        if (view) onView(view);
      })
      .catch(function () {
        pollDelay = Math.min(pollDelay * 2, 30000);
      })
      .then(function () {
        if (!ended && !pollTimer) pollTimer = window.setTimeout(poll, pollDelay);
      });
  }

  function startPolling() {
    if (source) {
      source.close();
      source = null;
    }
    if (!pollTimer && !ended) pollTimer = window.setTimeout(poll, 0);
  }

  function startLive() {
    if (ended) return;
    if (!('EventSource' in window)) {
      startPolling();
      return;
    }
    var received = false;
    var errors = 0;
    source = new EventSource(data.endpoints.events);
    source.addEventListener('payment', function (event) {
      received = true;
      errors = 0;
      try {
        onView(JSON.parse(event.data));
      } catch (e) {
        /* ignore a malformed event */
      }
    });
    source.onerror = function () {
      errors += 1;
      if (!source) return;
      // Never worked, closed for good (an HTTP error such as 429), or failing again and again: poll instead.
      if (!received || source.readyState === 2 || errors >= 3) startPolling();
    };
    // A proxy that buffers the stream delivers nothing: poll instead.
    window.setTimeout(function () {
      if (!received && source) startPolling();
    }, 10000);
  }
  startLive();

  // ---- TON Connect: pay from a connected wallet. Kassa builds the transfer; the wallet signs and
  // sends it; the page then says "sent, confirming" and waits for the chain, as for any transfer.
  var tonConnectUI = null;
  var paying = false;

  function tonConnect() {
    if (tonConnectUI) return tonConnectUI;
    var lib = window.TON_CONNECT_UI;
    if (!lib || !data.tonConnect) return null;
    try {
      var connector = new lib.TonConnect({
        manifestUrl: new URL(data.tonConnect.manifestPath, window.location.href).href,
        walletsListSource: new URL(data.tonConnect.walletsListPath, window.location.href).href,
        analytics: { mode: 'off' },
      });
      tonConnectUI = new lib.TonConnectUI({
        connector: connector,
        language: data.tonConnect.language,
        analytics: { mode: 'off' },
        actionsConfiguration: data.tonConnect.twaReturnUrl
          ? // In the store's Telegram Mini App: the wallet returns the customer to it (the t.me link).
            { returnStrategy: 'back', twaReturnUrl: data.tonConnect.twaReturnUrl, modals: ['before'], notifications: [] }
          : { returnStrategy: 'back', modals: ['before'], notifications: [] },
      });
      tonConnectUI.onStatusChange(function () {
        showTonConnect();
      });
    } catch (e) {
      tonConnectUI = null;
    }
    return tonConnectUI;
  }

  function shortAddress(address) {
    return address.length > 12 ? address.slice(0, 6) + '…' + address.slice(-4) : address;
  }

  function showTonConnect() {
    var box = document.getElementById('tonconnect');
    if (!box) return;
    var ui = tonConnect();
    if (!ui) return;
    box.hidden = false;
    var main = root();
    if (main) main.classList.add('has-tonconnect');
    var button = document.getElementById('tonconnect-pay');
    var account = document.getElementById('tonconnect-account');
    var accountText = document.getElementById('tonconnect-account-text');
    var wallet = ui.wallet;
    var name = wallet && (wallet.name || (wallet.device && wallet.device.appName)) || '';
    if (button && !paying) button.textContent = wallet && name ? message('payWithWallet').replace('{wallet}', name) : message('payConnected');
    if (account && accountText) {
      account.hidden = !wallet;
      if (wallet && ui.account) {
        var friendly = ui.account.address;
        try {
          friendly = window.TON_CONNECT_UI.toUserFriendlyAddress(ui.account.address, ui.account.chain === '-3');
        } catch (e) {
          /* keep the raw form */
        }
        accountText.textContent = message('connectedAs').replace('{wallet}', name).replace('{address}', shortAddress(friendly));
      }
    }
  }

  function waitForConnection(ui) {
    return new Promise(function (resolve, reject) {
      if (ui.connected) return resolve();
      var stopStatus = ui.onStatusChange(function (wallet) {
        if (wallet) {
          stopStatus();
          stopModal();
          resolve();
        }
      });
      var stopModal = ui.onModalStateChange(function (state) {
        if (state.status === 'closed' && !ui.connected) {
          stopStatus();
          stopModal();
          reject(new Error('closed'));
        }
      });
      ui.openModal();
    });
  }

  function setPaying(on) {
    paying = on;
    var button = document.getElementById('tonconnect-pay');
    if (!button) return;
    button.disabled = on;
    if (on) button.setAttribute('aria-busy', 'true');
    else button.removeAttribute('aria-busy');
    if (!on) showTonConnect();
  }

  function payWithWallet() {
    var ui = tonConnect();
    if (!ui || paying) return;
    notice('');
    setPaying(true);
    waitForConnection(ui)
      .then(function () {
        var url = data.endpoints.tonConnect + '?account=' + encodeURIComponent(ui.account.address);
        return fetch(url, { headers: { Accept: 'application/json' }, cache: 'no-store', credentials: 'same-origin' }).then(function (response) {
          return response.json().then(function (body) {
            if (!response.ok) {
              var error = new Error('kassa');
              error.code = body && body.error ? body.error.code : 'generic';
              throw error;
            }
            return body;
          });
        });
      })
      .then(function (request) {
        return ui.sendTransaction(request);
      })
      .then(function () {
        notice(message('sentConfirming'), 'info');
        announce(message('sentConfirming'));
        var button = document.getElementById('tonconnect-pay');
        setPaying(false);
        if (button) button.textContent = message('sentShort');
      })
      .catch(function (error) {
        setPaying(false);
        if (error && error.message === 'closed') return; // the customer closed the wallet list
        var text;
        if (error && error.code) text = messages['err_' + error.code] || message('tonConnectFailed');
        else if (error && (error instanceof window.TON_CONNECT_UI.UserRejectsError || /reject/i.test(String(error.message)))) text = message('walletRejected');
        else text = message('tonConnectFailed');
        notice(text, 'error');
        announce(text);
        if (error && (error.code === 'payment_not_open' || error.code === 'payment_expired')) refresh();
      });
  }

  function disconnectWallet() {
    var ui = tonConnect();
    if (ui && ui.connected) ui.disconnect().then(showTonConnect, showTonConnect);
  }

  if (!ended) {
    // The UI script is loaded before this one (both deferred), so it is there when the page is.
    showTonConnect();
  }
  // For the Telegram Mini App's script (telegram.js): the wallet list's state, to show Telegram's BackButton while it is open.
  window.KassaCheckout = { tonConnect: tonConnect };

  // ---- Choosing a method and copying values (delegated: #checkout is replaced on every change).
  function setMethodsDisabled(disabled) {
    var buttons = document.querySelectorAll('button[data-method-id]');
    for (var i = 0; i < buttons.length; i += 1) {
      if (buttons[i].hasAttribute('data-unavailable')) continue;
      buttons[i].disabled = disabled;
      if (!disabled) buttons[i].removeAttribute('aria-busy');
    }
  }

  function choose(button) {
    notice('');
    setMethodsDisabled(true);
    button.setAttribute('aria-busy', 'true');
    announce(message('selecting'));
    fetch(data.endpoints.method, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ paymentMethodID: button.getAttribute('data-method-id') }),
      credentials: 'same-origin',
      cache: 'no-store',
    })
      .then(function (response) {
        if (response.ok) {
          return response.json().then(function (view) {
            onView(view);
          });
        }
        return response
          .json()
          .catch(function () {
            return null;
          })
          .then(function (body) {
            var code = body && body.error && body.error.code ? body.error.code : 'generic';
            var text = message('err_' + code);
            notice(text, code === 'method_already_selected' ? 'info' : 'error');
            announce(text);
            if (code === 'method_already_selected' || code === 'payment_expired' || code === 'payment_not_open') {
              // Show what the payment is now: the method chosen before, or its end. Never a second address.
              refresh();
            } else {
              setMethodsDisabled(false);
            }
          });
      })
      .catch(function () {
        notice(message('err_network'), 'error');
        setMethodsDisabled(false);
      });
  }

  function copy(button) {
    var target = document.getElementById(button.getAttribute('data-copy'));
    if (!target) return;
    var text = (target.textContent || '').trim();
    var original = button.getAttribute('data-label') || button.textContent;
    button.setAttribute('data-label', original);
    // The name follows the visible word while "Copied" shows (a name must contain what is seen).
    var name = button.getAttribute('data-name') || button.getAttribute('aria-label') || '';
    button.setAttribute('data-name', name);
    function done(ok) {
      button.textContent = ok ? message('copied') : original;
      if (ok) button.setAttribute('aria-label', message('copied'));
      announce(ok ? message('copied') : message('copyFailed'));
      if (!ok) {
        var range = document.createRange();
        range.selectNodeContents(target);
        var selection = window.getSelection();
        if (selection) {
          selection.removeAllRanges();
          selection.addRange(range);
        }
      }
      window.setTimeout(function () {
        button.textContent = original;
        if (name) button.setAttribute('aria-label', name);
      }, 2000);
    }
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(
        function () {
          done(true);
        },
        function () {
          done(false);
        },
      );
    } else {
      done(false);
    }
  }

  document.addEventListener('click', function (event) {
    var element = event.target instanceof Element ? event.target : null;
    if (!element) return;
    var method = element.closest('button[data-method-id]');
    if (method && !method.disabled) {
      event.preventDefault();
      choose(method);
      return;
    }
    if (element.closest('#tonconnect-pay')) {
      event.preventDefault();
      payWithWallet();
      return;
    }
    if (element.closest('#tonconnect-disconnect')) {
      event.preventDefault();
      disconnectWallet();
      return;
    }
    var copyButton = element.closest('button[data-copy]');
    if (copyButton) {
      event.preventDefault();
      copy(copyButton);
    }
  });
})();
