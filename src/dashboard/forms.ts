// What a person typed in a dashboard form or a `kassa dashboard` command: an email address read as the
// dashboard keeps it. (A problem with what someone typed is errors.ts's FormProblem, shown beside the
// field it is about.)

/** "Ann@Example.com " → "ann@example.com", or null when it is not an email address. */
export function normalizeEmail(raw: string): string | null {
  const email = raw.trim().toLowerCase();
  return email.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) ? email : null;
}
