// Kassa checkout inside Telegram: the page as the store's Mini App. Telegram's own Mini App script
// (telegram-web-app.js from the npm package @twa-dev/sdk, served by Kassa as …/assets/telegram-web-app.js
// and run just before this file) speaks Telegram's host protocol — TelegramWebviewProxy in the
// apps, postMessage with the parent frame in the web clients — keeps the launch parameters for the
// tab's session, and gives window.Telegram.WebApp. This file is the glue over it: Telegram's theme
// on the page's own colours, the page's main action on the MainButton, the BackButton while the
// wallet list is open, ready and expand, and the init data to Kassa, which checks Telegram's
// signature and records the payer. Outside Telegram it does nothing: the page is the ordinary checkout.
(function () {
  'use strict';

  var configElement = document.getElementById('kassa-telegram');
  var telegram = window.Telegram;
  var webApp = telegram && telegram.WebApp;
  if (!configElement || !webApp) return;
  var config = JSON.parse(configElement.textContent || '{}');
  var texts = config.messages || {};
  var UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  var PORTAL = /^s_[A-Za-z0-9_-]{32}$/;

  // In a web client's frame Telegram's script has appended an empty <style> element for CSS the web
  // client may send (set_custom_style). The route's CSP allows that empty element and no inline
  // style beyond the page's own (src/checkout/telegram.ts, telegramCsp): out of the document, what a
  // web client writes into it is never applied, nor refused. checkout.css styles the scrollbars.
  if (telegram.WebView.isIframe) {
    Array.prototype.forEach.call(document.head.querySelectorAll('style:not([nonce]):not([id])'), function (style) {
      if (style.textContent === '') style.remove();
    });
  }

  // ---- The boot page ({prefix}/tg, or {prefix}/tg/{id} before the launch is checked): on to the
  // payment's Mini App page with the launch's init data in the query, which Kassa checks was signed
  // for the payment's own store's bot before it shows anything of the payment; the fragment kept.
  // Outside Telegram (no init data) {prefix}/tg/{id} goes to the payment's ordinary checkout.
  // A subscription's portal is launched with the start parameter s_<token> and goes on to {prefix}/tg/s/{token}.
  if (document.querySelector('[data-telegram-boot]')) {
    var id = config.paymentId || telegram.WebView.initParams.tgWebAppStartParam || (webApp.initDataUnsafe || {}).start_param;
    if (config.portalToken) id = 's_' + config.portalToken;
    var target = null;
    if (typeof id === 'string' && UUID.test(id)) target = config.bootPath + '/' + id.toLowerCase();
    else if (typeof id === 'string' && PORTAL.test(id)) target = config.bootPath + '/s/' + id.slice(2);
    if (!target) return;
    if (webApp.initData) {
      var query = new URLSearchParams(window.location.search);
      var next = new URLSearchParams();
      if (query.get('lang')) next.set('lang', query.get('lang'));
      next.set('tgWebAppData', webApp.initData);
      window.location.replace(target + '?' + next.toString() + window.location.hash);
    } else if (config.checkoutPath) {
      window.location.replace(config.checkoutPath + window.location.search);
    }
    return;
  }
  // In Telegram: launched with init data (the URL's fragment, or this tab's session), in an app's webview or a web client's frame.
  if (!webApp.initData || !(window.TelegramWebviewProxy || telegram.WebView.isIframe)) return;

  // ---- Theme: Telegram's colours on the page's own custom properties (CSSOM, which the CSP's
  // style-src does not restrict). Telegram's script itself sets --tg-theme-<key>,
  // --tg-viewport-height and --tg-viewport-stable-height.
  var THEME = {
    bg_color: ['--card'],
    secondary_bg_color: ['--bg', '--accent-soft'],
    text_color: ['--text'],
    hint_color: ['--muted'],
    link_color: ['--accent'],
    button_color: ['--brand'],
    button_text_color: ['--brand-text'],
    section_separator_color: ['--line'],
    destructive_text_color: ['--error'],
  };
  function rgbOf(hex) {
    var match = /^#?([0-9a-f]{6})$/i.exec(String(hex).trim());
    if (!match) return null;
    var n = parseInt(match[1], 16);
    return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  }
  function luminance(rgb) {
    var c = rgb.map(function (v) {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  }
  function contrast(a, b) {
    var x = luminance(a);
    var y = luminance(b);
    return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
  }
  /** `hint` mixed toward `text` in steps of 5% until it reaches 4.5:1 on every one of `backgrounds` (colours it cannot read stay as given). */
  function readableMuted(hint, text, backgrounds) {
    var from = rgbOf(hint);
    var to = rgbOf(text);
    var grounds = backgrounds.map(rgbOf);
    if (!from || !to || grounds.some(function (g) { return !g; })) return hint;
    for (var step = 0; step <= 20; step += 1) {
      var mixed = from.map(function (v, i) {
        return Math.round(v + ((to[i] - v) * step) / 20);
      });
      var readable = grounds.every(function (g) {
        return contrast(mixed, g) >= 4.5;
      });
      if (readable || step === 20) return '#' + mixed.map(function (v) { return (v < 16 ? '0' : '') + v.toString(16); }).join('');
    }
    return hint;
  }
  function applyTheme() {
    var params = webApp.themeParams || {};
    var style = document.documentElement.style;
    Object.keys(THEME).forEach(function (key) {
      if (!params[key]) return;
      THEME[key].forEach(function (name) {
        style.setProperty(name, params[key]);
      });
    });
    if (params.bg_color && !params.secondary_bg_color) style.setProperty('--bg', params.bg_color);
    // Telegram's hint colour is often too faint for small text (its dark theme's #708499 on #17212b
    // is 4.2:1): the page's muted text takes it moved toward the text colour until it reads at 4.5:1
    // (WCAG AA) on both backgrounds it sits on.
    if (params.hint_color && params.text_color && params.bg_color) {
      style.setProperty('--muted', readableMuted(params.hint_color, params.text_color, [params.bg_color, params.secondary_bg_color || params.bg_color]));
    }
    if (params.bg_color) {
      style.colorScheme = webApp.colorScheme;
      document.documentElement.classList.add('tg-themed');
    }
  }
  document.documentElement.classList.add('tg');
  applyTheme();
  webApp.onEvent('themeChanged', applyTheme);

  // ---- MainButton: the page's main action. Pending: pay from a wallet (TON Connect's button on the
  // page, which it then replaces); ended: back to the store when it gave a returnURL, else close.
  // Telegram's script colours it with the theme's button colours.
  var mainAction = null;
  function currentAction() {
    var main = document.getElementById('checkout');
    var status = main ? main.getAttribute('data-status') : null;
    var pay = document.getElementById('tonconnect-pay');
    var box = document.getElementById('tonconnect');
    if (status === 'pending' && pay && box && !box.hidden) {
      pay.hidden = true;
      return {
        text: pay.textContent,
        active: !pay.disabled,
        progress: pay.getAttribute('aria-busy') === 'true',
        run: function () {
          pay.click();
        },
      };
    }
    // A subscription's portal: its payment button.
    var portalPay = document.getElementById('portal-pay');
    if (portalPay) {
      return {
        text: portalPay.textContent,
        active: true,
        progress: false,
        run: function () {
          portalPay.click();
        },
      };
    }
    if (main && main.getAttribute('data-ended') === 'true') {
      var back = document.getElementById('return-link');
      if (back) {
        return {
          text: back.textContent,
          active: true,
          progress: false,
          run: function () {
            webApp.openLink(back.href);
          },
        };
      }
      return {
        text: texts.close || 'Close',
        active: true,
        progress: false,
        run: function () {
          webApp.close();
        },
      };
    }
    return null;
  }
  function updateMainButton() {
    var action = currentAction();
    var text = action ? action.text.trim().slice(0, 64).trim() : '';
    mainAction = text ? action : null;
    var button = webApp.MainButton;
    if (!mainAction) {
      button.hide();
      return;
    }
    // hideProgress() makes the button active again, showProgress(active) sets it: before and after setParams.
    if (!mainAction.progress && button.isProgressVisible) button.hideProgress();
    button.setParams({ text: text, is_active: mainAction.active, is_visible: true });
    if (mainAction.progress) button.showProgress(mainAction.active);
  }
  webApp.MainButton.onClick(function () {
    if (mainAction && mainAction.active) mainAction.run();
  });

  // ---- BackButton: while the wallet list is open, it closes the list.
  var modalOpen = false;
  var watchedUi = null;
  function watchWalletList() {
    var checkout = window.KassaCheckout;
    var ui = checkout && checkout.tonConnect ? checkout.tonConnect() : null;
    if (!ui || ui === watchedUi) return;
    watchedUi = ui;
    ui.onModalStateChange(function (state) {
      modalOpen = !!state && state.status === 'opened';
      if (modalOpen) webApp.BackButton.show();
      else webApp.BackButton.hide();
    });
  }
  webApp.BackButton.onClick(function () {
    if (modalOpen && watchedUi) watchedUi.closeModal();
  });

  // The page changes in place (a new state, a busy button): the MainButton follows.
  var pending = false;
  new MutationObserver(function () {
    if (pending) return;
    pending = true;
    window.setTimeout(function () {
      pending = false;
      updateMainButton();
      watchWalletList();
    }, 50);
  }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true, attributeFilter: ['hidden', 'disabled', 'aria-busy', 'data-status'] });

  // ---- The payer: the init data to Kassa, which checks Telegram's signature and records the user.
  if (config.initDataEndpoint) {
    fetch(config.initDataEndpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ initData: webApp.initData }),
      credentials: 'same-origin',
      cache: 'no-store',
    }).catch(function () {
      /* the payment goes on without it */
    });
  }

  webApp.ready();
  webApp.expand();
  watchWalletList();
  updateMainButton();
})();
