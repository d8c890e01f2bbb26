// API token scopes (docs/API.md, Token scopes): what a token may do. A route declares what it needs
// where it is registered (src/http/scope.ts, `needs(…)`); this file alone decides whether a scope
// allows it. Tokens issued before scopes carry none and keep full access.
import { insufficientScope } from '../errors.ts';

/** A token's scope: everything, reading only, or reading and creating payments (no refund, no cancel, no redelivery). */
export const TOKEN_SCOPES = ['full', 'read_only', 'create_payments'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/** What a route does, as far as scopes are concerned. */
export type ScopeNeed = 'read' | 'create_payment' | 'change';

const ALLOWED: Readonly<Record<TokenScope, readonly ScopeNeed[]>> = {
  full: ['read', 'create_payment', 'change'],
  read_only: ['read'],
  create_payments: ['read', 'create_payment'],
};

/** What each scope is for, in words (the CLI's help, the dashboard's form). */
export const SCOPE_LABELS: Readonly<Record<TokenScope, string>> = {
  full: 'full access',
  read_only: 'read-only',
  create_payments: 'create and read payments (no cancel, refund or webhook redelivery)',
};

export const isTokenScope = (value: unknown): value is TokenScope => typeof value === 'string' && (TOKEN_SCOPES as readonly string[]).includes(value);

export const scopeAllows = (scope: TokenScope, need: ScopeNeed): boolean => ALLOWED[scope].includes(need);

/** The narrowest scope that allows `need` (named in the refusal). */
const narrowestFor = (need: ScopeNeed): TokenScope => (need === 'read' ? 'read_only' : need === 'create_payment' ? 'create_payments' : 'full');

/** Refuses a request its token's scope does not allow: 403 insufficient_scope. */
export function checkScope(scope: TokenScope, need: ScopeNeed): void {
  if (scopeAllows(scope, need)) return;
  const wanted = narrowestFor(need);
  throw insufficientScope(scope, wanted === 'full' ? 'full' : `${wanted} or full`);
}
