// A small HTML template tag: every interpolated value is escaped unless it is already Html (made by
// this tag or by raw()). Arrays are joined; null, undefined and false render nothing.

export class Html {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Trusted markup, passed through as is (only for text this module or a trusted renderer made). */
export const raw = (markup: string): Html => new Html(markup);

type Value = Html | string | number | bigint | null | undefined | false | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]!;
  values.forEach((value, index) => {
    out += render(value) + strings[index + 1]!;
  });
  return new Html(out);
}

/** JSON for a <script type="application/json"> data block: `<` is escaped so it cannot close the tag. */
export const jsonForScript = (value: unknown): Html =>
  new Html(
    JSON.stringify(value)
      .replace(/</g, '\\u003c')
      .replace(/>/g, '\\u003e')
      .replace(/&/g, '\\u0026')
      .replace(/\u2028/g, '\\u2028')
      .replace(/\u2029/g, '\\u2029'),
  );
