// The store's glossary page (issue 32): every entry of glossary.ts, its plain word, what it means
// and the precise term, each with an id the pages' words link to (`…/glossary#counted`).
import { html } from '../web/html.ts';
import { GLOSSARY, type GlossaryEntry, type Term } from './glossary.ts';
import { type StoreContext, shell, type Viewer } from './pages.ts';

/** `code` spans for the precise terms written between backticks. */
const preciseHtml = (text: string) => text.split(/`([^`]+)`/).map((part, index) => (index % 2 ? html`<code>${part}</code>` : part));

/** A precise term longer than this (a list: every event's or audit action's exact name) is folded, so the page stays short on a phone. */
const LONG_PRECISE = 400;

export function glossaryPage(input: { root: string; viewer: Viewer; store: StoreContext }): string {
  const entries = Object.entries(GLOSSARY) as [Term, GlossaryEntry][];
  const body = html`<h1>What the words mean</h1>
<p>The dashboard uses plain words for money. Each one is explained here, with the precise term the books, the API and Kassa's documents use.</p>
<dl class="glossary card">${entries.map(
    ([key, entry]) =>
      html`<dt id="${key}">${entry.word}</dt><dd><p>${entry.meaning}</p>${
        entry.precise.length > LONG_PRECISE
          ? html`<details class="precise-more"><summary class="muted">Precise terms</summary><p class="muted precise">${preciseHtml(entry.precise)}</p></details>`
          : html`<p class="muted precise">Precise term: ${preciseHtml(entry.precise)}</p>`
      }</dd>`,
  )}</dl>`;
  return shell({ root: input.root, title: 'What the words mean', body, viewer: input.viewer, store: input.store });
}
