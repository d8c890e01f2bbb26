// A browser-like client of the dashboard over plain HTTP: keeps its cookie, sends forms with the
// dashboard's Origin (or another one), follows no redirect (tests read Location). And a shortcut:
// invite someone to a store and have them accept with a password.
import assert from 'node:assert/strict';
import { CLI_ACTOR } from '../../src/dashboard/audit.ts';
import { createInvitation } from '../../src/dashboard/invitations.ts';
import type { Role } from '../../src/dashboard/roles.ts';
import type { DatabasePool } from '../../src/db/pool.ts';

export interface PageResponse {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

export interface DashboardClient {
  cookie: string | null;
  get(path: string): Promise<PageResponse>;
  /** `fields` as pairs when a name repeats (several checkboxes of one name). */
  post(path: string, fields?: Record<string, string> | Array<[string, string]>, options?: { origin?: string | null }): Promise<PageResponse>;
}

/** `headers` go with every request (an X-Forwarded-For that plays another client address behind TRUST_PROXY, say). */
export function dashboardClient(url: string, options: { headers?: Record<string, string> } = {}): DashboardClient {
  const client: DashboardClient = {
    cookie: null,
    async get(path) {
      return send(path, { method: 'GET' });
    },
    async post(path, fields = {}, options = {}) {
      const origin = options.origin === undefined ? url : options.origin;
      return send(path, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(origin === null ? {} : { origin }) },
        body: new URLSearchParams(fields).toString(),
      });
    },
  };
  async function send(path: string, init: RequestInit): Promise<PageResponse> {
    const headers = new Headers({ ...options.headers, ...(init.headers as Record<string, string> | undefined) });
    if (client.cookie) headers.set('cookie', client.cookie);
    const response = await fetch(`${url}${path}`, { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, value] = pair!.split('=');
      client.cookie = value ? `${name}=${value}` : null;
    }
    return { status: response.status, headers: response.headers, text: await response.text(), location: response.headers.get('location') };
  }
  return client;
}

/** The path of an invitation link (`/dashboard/invite/<token>`), made as `kassa dashboard invite` makes it. */
export async function invitationPath(pool: DatabasePool, storeId: string, email: string, role: Role, now = new Date()): Promise<string> {
  const invitation = await createInvitation(pool, { storeId, email, role, baseUrl: 'http://kassa.invalid', actor: CLI_ACTOR, now });
  return new URL(invitation.url).pathname;
}

/** A signed-in client of a new member of the store (an existing account signs in with `password`, then joins). */
export async function member(
  url: string,
  pool: DatabasePool,
  storeId: string,
  email: string,
  role: Role,
  password = 'correct horse battery',
): Promise<DashboardClient> {
  const client = dashboardClient(url);
  const path = await invitationPath(pool, storeId, email, role);
  let accepted = await client.post(path, { password, confirm: password });
  if (accepted.status === 403 && /Sign in as /.test(accepted.text)) {
    // Someone who has an account already: signed in as them, the invitation is a button.
    const signedIn = await client.post('/dashboard/sign-in', { email, password });
    assert.equal(signedIn.status, 303, signedIn.text);
    accepted = await client.post(path);
  }
  assert.equal(accepted.status, 303, accepted.text);
  assert.ok(client.cookie);
  return client;
}
