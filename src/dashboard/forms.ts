// What a person typed in a dashboard form or a `kassa dashboard` command: the problem shown beside the
// field it is about (FormProblem; nothing was changed), and an email address read as the dashboard keeps it.

/** A problem with what someone typed, shown beside the field it is about; nothing was changed. */
export class FormProblem extends Error {
  override name = 'FormProblem';
  readonly field: string | null;
  constructor(message: string, field: string | null = null) {
    super(message);
    this.field = field;
  }
}

/** "Ann@Example.com " → "ann@example.com", or null when it is not an email address. */
export function normalizeEmail(raw: string): string | null {
  const email = raw.trim().toLowerCase();
  return email.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) ? email : null;
}
