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
  // Copy buttons beside an id (pages.ts copyableId): the id is in the button's data-copy-text.
  for (const button of document.querySelectorAll('button[data-copy-text]')) {
    if (!navigator.clipboard) continue;
    button.hidden = false;
    // The button's name follows its text (what it says is what a screen reader says).
    const label = button.getAttribute('aria-label') ?? 'Copy';
    const say = (text, name) => {
      button.textContent = text;
      button.setAttribute('aria-label', name);
    };
    button.addEventListener('click', () => {
      navigator.clipboard.writeText(button.getAttribute('data-copy-text') ?? '').then(
        () => {
          say('Copied', 'Copied');
          setTimeout(() => say('Copy', label), 2000);
        },
        () => say('Select it', 'Could not copy: select the text and copy it yourself'),
      );
    });
  }
  // On a phone (below 600 px, dashboard.css) the navigation folds behind the menu button: a
  // disclosure (aria-expanded on the button; Escape closes it and gives the button the focus).
  // Without this script the menu simply stays shown.
  const menuButton = document.querySelector('.menu-button');
  const menu = document.getElementById('menu');
  if (menuButton && menu) {
    const setOpen = (open) => {
      menuButton.setAttribute('aria-expanded', String(open));
      menu.classList.toggle('closed', !open);
    };
    setOpen(false);
    menuButton.hidden = false;
    menuButton.addEventListener('click', () => setOpen(menuButton.getAttribute('aria-expanded') !== 'true'));
    menu.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && menuButton.getAttribute('aria-expanded') === 'true' && window.getComputedStyle(menuButton).display !== 'none') {
        setOpen(false);
        menuButton.focus();
      }
    });
  }
  // Folded on a phone, open on a wider screen: the payments list's filters.
  if (window.matchMedia('(min-width: 600px)').matches) for (const details of document.querySelectorAll('details[data-open-wide]')) details.open = true;
  // Lists become cards on a phone (dashboard.css, below 600 px): each cell is labelled with its
  // column's heading, and the table keeps its roles for screen readers when the stylesheet lays its
  // rows out as blocks. Without this script a table scrolls inside its frame.
  let captions = 0;
  const cards = (table) => {
    const headings = [...table.querySelectorAll(':scope > thead > tr > th')].map((th) => th.textContent.trim());
    table.setAttribute('role', 'table');
    // A caption is not a row: under role="table" it would break the table's roles (axe-core's
    // aria-required-children), so it becomes the paragraph above that names the table.
    const caption = table.querySelector(':scope > caption');
    if (caption) {
      const name = document.createElement('p');
      name.className = `${caption.className} table-caption`.trim();
      name.id = table.id ? `${table.id}-caption` : `table-caption-${++captions}`;
      name.append(...caption.childNodes);
      caption.remove();
      table.before(name);
      table.setAttribute('aria-labelledby', name.id);
    }
    for (const group of table.querySelectorAll(':scope > thead, :scope > tbody')) group.setAttribute('role', 'rowgroup');
    for (const th of table.querySelectorAll(':scope > thead > tr > th')) th.setAttribute('role', 'columnheader');
    for (const row of table.querySelectorAll(':scope > thead > tr, :scope > tbody > tr')) {
      row.setAttribute('role', 'row');
      if (row.parentElement?.tagName !== 'TBODY') continue;
      [...row.children].forEach((cell, index) => {
        cell.setAttribute('role', cell.tagName === 'TH' ? 'rowheader' : 'cell');
        if (headings[index]) cell.setAttribute('data-label', headings[index]);
      });
    }
    table.classList.add('cards');
  };
  const cardTables = (root) => {
    // A table marked keep-table stays a table (a few narrow columns, their headings linking to the glossary).
    for (const table of root.querySelectorAll('.table-wrap > table:not(.keep-table)')) cards(table);
  };
  cardTables(document);
  if (list) new MutationObserver(() => cardTables(list)).observe(list, { childList: true });
  for (const form of document.querySelectorAll('form[data-confirm]')) {
    form.addEventListener('submit', (event) => {
      if (!window.confirm(form.getAttribute('data-confirm') ?? 'Are you sure?')) event.preventDefault();
    });
  }
})();
