// Kassa dashboard: small helps on top of pages that work without it. Live payments list: the
// list's rows are refreshed from the server's event stream (the same mechanism as the checkout's
// live status); without JavaScript the page is simply reloaded by the reader.
(() => {
  const list = document.getElementById('payments');
  const source = list?.getAttribute('data-live');
  if (list && source && 'EventSource' in window) {
    const events = new EventSource(source);
    events.addEventListener('payments', () => {
      fetch(window.location.href, { headers: { Accept: 'text/html' }, credentials: 'same-origin' })
        .then((response) => (response.ok ? response.text() : Promise.reject(new Error(String(response.status)))))
        .then((text) => {
          const next = new DOMParser().parseFromString(text, 'text/html').getElementById('payments');
          if (next) list.innerHTML = next.innerHTML;
        })
        .catch(() => {});
    });
  }
  // Store settings: the checkout preview follows the appearance form as it is typed (nothing is
  // saved); its colour comes from settings/preview.css, so no inline style is needed.
  const preview = document.getElementById('preview');
  const look = document.getElementById('appearance-form');
  const style = document.getElementById('preview-style');
  if (preview && look && style) {
    const value = (name) => look.elements.namedItem(name)?.value.trim() ?? '';
    const update = () => {
      const name = document.getElementById('preview-name');
      if (name) name.textContent = value('display-name') || value('name');
      const accent = value('accent-color');
      const href = new URL(style.href);
      href.searchParams.set('accent', /^#[0-9a-fA-F]{6}$/.test(accent) ? accent : '');
      if (href.toString() !== style.href) style.href = href.toString();
      const logo = document.getElementById('preview-logo');
      if (logo) {
        const url = value('logo-url');
        const shown = /^https:\/\/[^\s]+$/.test(url);
        logo.hidden = !shown;
        if (shown && logo.getAttribute('src') !== url) logo.setAttribute('src', url);
      }
    };
    look.addEventListener('input', update);
  }
  // Copy buttons (the issued token, the receiver snippet): rendered hidden, shown only where the
  // script runs; without it the value stays selectable on the page.
  for (const button of document.querySelectorAll('button[data-copy]')) {
    const target = document.getElementById(button.getAttribute('data-copy') ?? '');
    const status = document.getElementById(`${button.getAttribute('data-copy')}-copied`);
    if (!target || !navigator.clipboard) continue;
    button.hidden = false;
    button.addEventListener('click', () => {
      const text = 'value' in target ? target.value : target.textContent;
      navigator.clipboard.writeText(text ?? '').then(
        () => {
          if (status) status.textContent = 'Copied.';
        },
        () => {
          if (status) status.textContent = 'Could not copy: select the text and copy it yourself.';
        },
      );
    });
  }
  for (const form of document.querySelectorAll('form[data-confirm]')) {
    form.addEventListener('submit', (event) => {
      if (!window.confirm(form.getAttribute('data-confirm') ?? 'Are you sure?')) event.preventDefault();
    });
  }
})();
