// Kassa checkout inside Telegram: the page as the store's Mini App (served from 'self', no inline
// code, no third-party script). It speaks Telegram's Mini App host protocol itself, which is small:
// - to Telegram: `window.TelegramWebviewProxy.postEvent(type, json)` in the mobile and desktop apps,
//   `window.parent.postMessage(JSON.stringify({eventType, eventData}), origin)` in the web clients
//   (only to the origins the server names: Telegram's web clients);
// - from Telegram: `window.Telegram.WebView.receiveEvent(type, data)` called by the apps, `message`
//   events `{eventType, eventData}` from the parent frame in the web clients (their origin checked).
// It applies Telegram's theme (themeParams → CSS custom properties) and viewport, mirrors the page's
// main action on Telegram's MainButton, shows the BackButton while the wallet list is open, and sends
// the init data to Kassa, which checks Telegram's signature and records the payer. Outside Telegram it
// does nothing: the page is the ordinary checkout.
(function () {
  'use strict';

  var configElement = document.getElementById('kassa-telegram');
  if (!configElement) return;
  var config = JSON.parse(configElement.textContent || '{}');
  var origins = config.origins || [];
  var texts = config.messages || {};
  var UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  var STORAGE_KEY = 'kassa-telegram-launch';

  // ---- Launch parameters: in the URL's fragment (tgWebAppData, tgWebAppThemeParams, …), kept for
  // this tab's session so a reload or the boot page's redirect keeps them.
  function launchParams() {
    var found = {};
    [window.location.hash.slice(1), window.location.search.slice(1)].forEach(function (part) {
      var params = new URLSearchParams(part);
      params.forEach(function (value, key) {
        if (key.indexOf('tgWebApp') === 0 && !(key in found)) found[key] = value;
      });
    });
    try {
      if (found.tgWebAppData) window.sessionStorage.setItem(STORAGE_KEY, JSON.stringify(found));
      else found = JSON.parse(window.sessionStorage.getItem(STORAGE_KEY) || '{}') || {};
    } catch (e) {
      /* storage unavailable: the fragment alone */
    }
    return found;
  }

  var launch = launchParams();
  var framed = window.parent && window.parent !== window;
  var proxy = window.TelegramWebviewProxy;
  var inTelegram = !!launch.tgWebAppData && (!!(proxy && proxy.postEvent) || framed);

  function startParam() {
    if (launch.tgWebAppStartParam) return launch.tgWebAppStartParam;
    var data = new URLSearchParams(launch.tgWebAppData || '');
    return data.get('start_param');
  }

  // ---- The boot page ({prefix}/tg): on to the payment's Mini App page, the fragment kept.
  if (document.querySelector('[data-telegram-boot]')) {
    var id = startParam();
    if (id && UUID.test(id)) window.location.replace(config.bootPath + '/' + id.toLowerCase() + window.location.hash);
    return;
  }
  if (!inTelegram) return;

  // ---- Talking to Telegram.
  function postEvent(eventType, eventData) {
    var payload = eventData === undefined ? null : eventData;
    try {
      if (proxy && proxy.postEvent) {
        proxy.postEvent(eventType, JSON.stringify(payload));
        return;
      }
      var message = JSON.stringify({ eventType: eventType, eventData: payload });
      // To Telegram's web clients only: a frame of another origin gets nothing.
      for (var i = 0; i < origins.length; i += 1) window.parent.postMessage(message, origins[i]);
    } catch (e) {
      /* an old client without this event */
    }
  }

  var handlers = {};
  function receiveEvent(eventType, eventData) {
    var handler = handlers[eventType];
    if (handler) handler(eventData || {});
  }
  // The apps call window.Telegram.WebView.receiveEvent (and TelegramGameProxy's, in older ones).
  window.Telegram = window.Telegram || {};
  window.Telegram.WebView = window.Telegram.WebView || {};
  window.Telegram.WebView.receiveEvent = receiveEvent;
  window.TelegramGameProxy = window.TelegramGameProxy || {};
  window.TelegramGameProxy.receiveEvent = receiveEvent;
  window.addEventListener('message', function (event) {
    if (event.source !== window.parent || origins.indexOf(event.origin) === -1) return;
    var message = event.data;
    try {
      if (typeof message === 'string') message = JSON.parse(message);
    } catch (e) {
      return;
    }
    if (message && typeof message.eventType === 'string') receiveEvent(message.eventType, message.eventData);
  });

  // ---- Theme and viewport: Telegram's colours on the page's own custom properties (CSSOM, which
  // the CSP's style-src does not restrict), each also as --tg-theme-<key>.
  var COLOR = /^#[0-9a-f]{6}$/i;
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
  var theme = {};
  function luminance(hex) {
    var n = parseInt(hex.slice(1), 16);
    return (0.299 * ((n >> 16) & 255) + 0.587 * ((n >> 8) & 255) + 0.114 * (n & 255)) / 255;
  }
  function applyTheme(params) {
    if (!params || typeof params !== 'object') return;
    var style = document.documentElement.style;
    Object.keys(params).forEach(function (key) {
      var value = params[key];
      if (typeof value !== 'string' || !COLOR.test(value) || !/^[a-z_]{1,40}$/.test(key)) return;
      theme[key] = value.toLowerCase();
      style.setProperty('--tg-theme-' + key.replace(/_/g, '-'), theme[key]);
      (THEME[key] || []).forEach(function (name) {
        style.setProperty(name, theme[key]);
      });
    });
    if (theme.bg_color && !theme.secondary_bg_color) style.setProperty('--bg', theme.bg_color);
    if (theme.bg_color) style.colorScheme = luminance(theme.bg_color) < 0.5 ? 'dark' : 'light';
    document.documentElement.classList.add('tg-themed');
    updateMainButton(true);
  }
  function applyViewport(data) {
    var style = document.documentElement.style;
    if (typeof data.height === 'number' && data.height > 0) style.setProperty('--tg-viewport-height', data.height + 'px');
    if (data.is_state_stable && typeof data.height === 'number' && data.height > 0) style.setProperty('--tg-viewport-stable-height', data.height + 'px');
  }
  handlers.theme_changed = function (data) {
    applyTheme(data.theme_params);
  };
  handlers.viewport_changed = applyViewport;

  document.documentElement.classList.add('tg');
  try {
    if (launch.tgWebAppThemeParams) applyTheme(JSON.parse(launch.tgWebAppThemeParams));
  } catch (e) {
    /* no theme in the launch: Telegram sends theme_changed */
  }

  // ---- MainButton: the page's main action. Pending: pay from a wallet (TON Connect's button on the
  // page, which it then replaces); ended: back to the store when it gave a returnURL, else close.
  var mainAction = null;
  var lastMain = '';
  function currentAction() {
    var main = document.getElementById('checkout');
    var status = main ? main.getAttribute('data-status') : null;
    var pay = document.getElementById('tonconnect-pay');
    var box = document.getElementById('tonconnect');
    if (status === 'pending' && pay && box && !box.hidden) {
      pay.hidden = true;
      return { text: pay.textContent.trim(), active: !pay.disabled, progress: pay.getAttribute('aria-busy') === 'true', run: function () {
        pay.click();
      } };
    }
    if (main && main.getAttribute('data-ended') === 'true') {
      var back = document.getElementById('return-link');
      if (back) {
        return { text: back.textContent.trim(), active: true, progress: false, run: function () {
          postEvent('web_app_open_link', { url: back.href });
        } };
      }
      return { text: texts.close || 'Close', active: true, progress: false, run: function () {
        postEvent('web_app_close');
      } };
    }
    return null;
  }
  function updateMainButton(force) {
    mainAction = currentAction();
    var params = mainAction
      ? {
          is_visible: true,
          is_active: mainAction.active,
          is_progress_visible: mainAction.progress,
          text: mainAction.text.slice(0, 64),
          color: theme.button_color || '#2481cc',
          text_color: theme.button_text_color || '#ffffff',
        }
      : { is_visible: false };
    var key = JSON.stringify(params);
    if (!force && key === lastMain) return;
    lastMain = key;
    postEvent('web_app_setup_main_button', params);
  }
  handlers.main_button_pressed = function () {
    if (mainAction && mainAction.active) mainAction.run();
  };

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
      postEvent('web_app_setup_back_button', { is_visible: modalOpen });
    });
  }
  handlers.back_button_pressed = function () {
    if (modalOpen && watchedUi) watchedUi.closeModal();
  };

  // The page changes in place (a new state, a busy button): the MainButton follows.
  var pending = false;
  new MutationObserver(function () {
    if (pending) return;
    pending = true;
    window.setTimeout(function () {
      pending = false;
      updateMainButton(false);
      watchWalletList();
    }, 50);
  }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true, attributeFilter: ['hidden', 'disabled', 'aria-busy', 'data-status'] });

  // ---- The payer: the init data to Kassa, which checks Telegram's signature and records the user.
  if (config.initDataEndpoint) {
    fetch(config.initDataEndpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ initData: launch.tgWebAppData }),
      credentials: 'same-origin',
      cache: 'no-store',
    }).catch(function () {
      /* the payment goes on without it */
    });
  }

  postEvent('web_app_ready');
  postEvent('web_app_expand');
  postEvent('web_app_request_theme');
  postEvent('web_app_request_viewport');
  watchWalletList();
  updateMainButton(true);
})();
