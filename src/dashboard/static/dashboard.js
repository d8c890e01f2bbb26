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
  for (const form of document.querySelectorAll('form[data-confirm]')) {
    form.addEventListener('submit', (event) => {
      if (!window.confirm(form.getAttribute('data-confirm') ?? 'Are you sure?')) event.preventDefault();
    });
  }
})();
