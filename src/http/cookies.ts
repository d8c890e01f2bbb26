// Reading one cookie of a request's Cookie header (the payment link's visitor cookie, src/http/routes/checkoutLinks.ts;
// the dashboard's session cookie, src/http/routes/dashboardSteps.ts).

/** The value of the cookie `name` in a Cookie header, or null. */
export function readCookie(header: string, name: string): string | null {
  for (const part of header.split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return null;
}
