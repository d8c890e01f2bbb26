// Every policy action is proved server-side (issue 49 item 1): this test installs the dashboard's
// routes on a router as the app does and walks every route of a store (`/stores/:storeId/…`). Each
// names its action (dashboard/policy.ts: a route's `can`, or reading the store for a GET page, which
// the router marks with ROUTE_ACTION); a store route without one fails the test. Then, over real
// HTTP with a real database, a member of every role asks every route whose action that role lacks
// (a POST from the dashboard's own origin, as a browser would) and must get 403 "Not allowed"; and a
// signed-in person of another store gets 404 from every store route. Nothing is listed by hand: a
// new route is walked as soon as it is registered.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { loadConfig } from '../../src/config.ts';
import { ROLES, type Role } from '../../src/dashboard/roles.ts';
import { type Action, can, POLICY } from '../../src/dashboard/policy.ts';
import type { AppDeps, KassaState } from '../../src/http/context.ts';
import { createGuards } from '../../src/http/guards.ts';
import { dashboardRoutes } from '../../src/http/routes/dashboard.ts';
import { DASHBOARD_PATH, dashboardRouter, ROUTE_ACTION } from '../../src/http/routes/dashboardSteps.ts';
import { createLogger } from '../../src/log.ts';
import type { TestApp } from '../helpers/app.ts';
import { type DashboardClient, member } from '../helpers/dashboard.ts';
import { buildPayment } from '../helpers/factories.ts';
import { startPaymentsApp } from '../helpers/payments.ts';

interface Layer {
  path: string;
  methods: string[];
  stack: Middleware[];
}

const STORE_PREFIX = `${DASHBOARD_PATH}/stores/:storeId`;

/** A router with the dashboard's routes, as createApp installs them (no database is touched to install). */
function installed(): { router: Router<KassaState>; deps: AppDeps } {
  const config = loadConfig({ PORT: '0', DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }, '/tmp');
  const deps: AppDeps = { config, pool: {} as AppDeps['pool'], log: createLogger('silent'), now: () => new Date() };
  const router = new Router<KassaState>({ strict: true });
  dashboardRoutes(router, deps, createGuards(deps));
  return { router, deps };
}

const layersOf = (router: Router<KassaState>) => (router as unknown as { stack: Layer[] }).stack;

/** A store route's action, as its steps carry it (undefined: none). */
const actionOf = (layer: Layer): Action | undefined =>
  layer.stack.map((step) => (step as unknown as Record<symbol, Action | undefined>)[ROUTE_ACTION]).find((action) => action !== undefined);

/** Every store route (each method its own), with its action. */
function storeRoutes(router: Router<KassaState>): Array<{ method: string; path: string; action: Action | undefined }> {
  return layersOf(router)
    .filter((layer) => layer.path.startsWith(STORE_PREFIX) && layer.methods.length > 0)
    .flatMap((layer) => layer.methods.filter((method) => method !== 'HEAD').map((method) => ({ method, path: layer.path, action: actionOf(layer) })));
}

/** The store routes that name no action, as `METHOD path`. */
const withoutAction = (router: Router<KassaState>) => storeRoutes(router).flatMap((route) => (route.action ? [] : [`${route.method} ${route.path}`]));

describe('structure: every store route of the dashboard names its action', () => {
  it('each route under /stores/:storeId carries an action of dashboard/policy.ts, and every action but making a store is some route’s', () => {
    const { router } = installed();
    const routes = storeRoutes(router);
    assert.ok(routes.length >= 40, `${routes.length} store routes found`);
    assert.deepEqual(withoutAction(router), [], 'store routes without an action: give each `can` (dashboard/policy.ts)');
    assert.deepEqual(
      routes.filter((route) => route.method !== 'GET' && route.action === 'store.read').map((route) => `${route.method} ${route.path}`),
      [],
      'a route that changes state names more than reading the store',
    );
    const used = new Set(routes.map((route) => route.action));
    // store.create is a signed-in person's (New store, dashboard/setup.ts mayCreateStore), before any store.
    assert.deepEqual(
      Object.keys(POLICY).filter((action) => action !== 'store.create' && !used.has(action as Action)),
      [],
      'actions no route names',
    );
  });

  it('the policy itself: a viewer reads the store and keeps their own notifications, nothing more; an owner may everything', () => {
    const actions = Object.keys(POLICY) as Action[];
    assert.deepEqual(
      actions.filter((action) => can('viewer', action)),
      ['store.read', 'notifications.own'],
    );
    assert.deepEqual(
      actions.filter((action) => !can('owner', action)),
      [],
    );
    assert.equal(can(null, 'store.read'), false);
  });

  it('the walker finds a store route registered without an action', () => {
    const { router, deps } = installed();
    const already = withoutAction(router);
    const dash = dashboardRouter(router, deps, createGuards(deps));
    dash.store.post('/forgotten', async (ctx) => {
      ctx.body = 'changed';
    });
    dash.payment.post('/forgotten-too', async (ctx) => {
      ctx.body = 'changed';
    });
    dash.store.get('/a-page', async (ctx) => {
      ctx.body = 'read';
    });
    assert.deepEqual(
      withoutAction(router).filter((route) => !already.includes(route)),
      [`POST ${STORE_PREFIX}/forgotten`, `POST ${STORE_PREFIX}/payments/:paymentId/forgotten-too`],
    );
  });
});

describe('every role is refused each action it lacks, over HTTP', () => {
  let app: TestApp;
  let storeId: string;
  let paymentId: string;
  const clients = {} as Record<Role, DashboardClient>;
  let outsider: DashboardClient;

  before(async () => {
    app = await startPaymentsApp();
    const store = await app.store({ name: 'Guarded' });
    storeId = store.id;
    for (const role of ROLES) clients[role] = await member(app.url, app.pool, store.id, `perm-${role}@example.com`, role);
    const other = await app.store({ name: 'Elsewhere' });
    outsider = await member(app.url, app.pool, other.id, 'perm-outsider@example.com', 'owner');
    paymentId = (await buildPayment(app, store, { status: 'completed', body: { amount: '1', currency: 'TON' } })).id;
  });
  after(() => app?.close());

  /** The route's path with the store's ids, and a fresh uuid for any other parameter (checked after the action). */
  const concrete = (path: string) =>
    path
      .replace(':storeId', storeId)
      .replace(':paymentId', paymentId)
      .replace(/:[A-Za-z]+/g, () => crypto.randomUUID());

  const ask = (client: DashboardClient, method: string, path: string) => (method === 'GET' ? client.get(path) : client.post(path, { confirmed: 'yes' }));

  it('a member whose role lacks a route’s action gets 403 “Not allowed” (the role read again on the server)', async () => {
    const routes = storeRoutes(installed().router);
    const wrong: string[] = [];
    let refusals = 0;
    for (const route of routes) {
      for (const role of ROLES) {
        // A route without an action is the walk's own failure (above); here, the actions as marked.
        if (route.action === undefined || can(role, route.action)) continue;
        const response = await ask(clients[role], route.method, concrete(route.path));
        refusals++;
        if (response.status !== 403 || !/Not allowed/.test(response.text))
          wrong.push(`${role} ${route.method} ${route.path} (${route.action}): ${response.status} ${response.location ?? ''}`);
      }
    }
    assert.deepEqual(wrong, [], 'routes that did not refuse a role lacking their action');
    assert.ok(refusals >= 25, `${refusals} refusals asked for`);
  });

  it('a person signed in to another store gets 404 from every store route', async () => {
    const wrong: string[] = [];
    for (const route of storeRoutes(installed().router)) {
      const response = await ask(outsider, route.method, concrete(route.path));
      if (response.status !== 404) wrong.push(`${route.method} ${route.path}: ${response.status}`);
    }
    assert.deepEqual(wrong, []);
  });
});
