// The checkout framed by <kassa-pay> (src/checkout/embed.ts): tells the element on the shop's page
// which payment this frame shows and how tall it is, by postMessage to the one origin the frame was
// opened for (its `embed` parameter, which the server checked against the store's embedOrigins and
// put in this page's frame-ancestors). Nothing is read from the parent: the element follows the
// payment itself, through the checkout's event stream.
(() => {
  const origin = new URLSearchParams(window.location.search).get('embed');
  if (!origin || window.parent === window) return;
  const post = (message) => window.parent.postMessage({ source: 'kassa-pay', ...message }, origin);
  const data = document.getElementById('kassa-data');
  if (data) {
    try {
      const paymentId = JSON.parse(data.textContent || '{}').paymentId;
      if (typeof paymentId === 'string') post({ type: 'payment', paymentId });
    } catch {
      // Not this page's data: nothing to tell.
    }
  }
  // The language switch stays framed (it keeps `embed`); a link out of the checkout (back to the
  // shop, a wallet's link) leaves the frame for the whole tab.
  for (const link of document.querySelectorAll('nav.langs a[href]')) {
    const url = new URL(link.getAttribute('href'), window.location.href);
    url.searchParams.set('embed', origin);
    link.setAttribute('href', `${url.pathname}${url.search}`);
  }
  document.addEventListener('click', (event) => {
    const link = event.target instanceof Element ? event.target.closest('a[href]') : null;
    if (link && new URL(link.href, window.location.href).origin !== window.location.origin) link.setAttribute('target', '_top');
  });
  let last = 0;
  const report = () => {
    const height = Math.ceil(document.documentElement.scrollHeight);
    if (height !== last) {
      last = height;
      post({ type: 'height', height });
    }
  };
  new ResizeObserver(report).observe(document.body);
  report();
})();
