// The dashboard's pipeline is installed, not named (issue 33): this test installs the dashboard's
// routes on a router as the app does and walks every route. It fails on a route under /dashboard
// that can change state (any method but GET and HEAD) without the same-origin check and the form
// parser in its steps, unless the route names why it opts out of the check; and on a dashboard
// path without the error pages and the per-client limit before it. It also shows the walker catches
// a POST registered past the dashboard's router.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { loadConfig } from '../../src/config.ts';
import type { AppDeps, KassaState } from '../../src/http/context.ts';
import { createGuards } from '../../src/http/guards.ts';
import { dashboardRoutes } from '../../src/http/routes/dashboard.ts';
import { DASHBOARD_PATH, ORIGIN_CHECK, ORIGIN_CHECK_OPT_OUT } from '../../src/http/routes/dashboardSteps.ts';
import { createLogger } from '../../src/log.ts';

interface Layer {
  path: string;
  methods: string[];
  stack: Middleware[];
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A router with the dashboard's routes, as createApp installs them (no database is touched to install). */
function installed(): { router: Router<KassaState>; deps: AppDeps } {
  const config = loadConfig({ PORT: '0', DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }, '/tmp');
  const deps: AppDeps = { config, pool: {} as AppDeps['pool'], log: createLogger('silent'), now: () => new Date() };
  const router = new Router<KassaState>({ strict: true });
  dashboardRoutes(router, deps, createGuards(deps));
  return { router, deps };
}

const layersOf = (router: Router<KassaState>) => (router as unknown as { stack: Layer[] }).stack;
const tagged = (stack: Middleware[], tag: symbol) => stack.find((step) => (step as unknown as Record<symbol, unknown>)[tag] !== undefined);

/** The dashboard routes that can change state and have neither the origin check nor a named opt-out, as `METHOD path`. */
function unguarded(router: Router<KassaState>): string[] {
  const found: string[] = [];
  for (const layer of layersOf(router)) {
    if (!layer.path.startsWith(DASHBOARD_PATH) || layer.methods.length === 0) continue;
    const changing = layer.methods.filter((method) => !SAFE.has(method));
    if (changing.length === 0) continue;
    const optOut = tagged(layer.stack, ORIGIN_CHECK_OPT_OUT) as unknown as Record<symbol, unknown> | undefined;
    const checked = tagged(layer.stack, ORIGIN_CHECK);
    if (!checked && !(optOut && typeof optOut[ORIGIN_CHECK_OPT_OUT] === 'string' && (optOut[ORIGIN_CHECK_OPT_OUT] as string).length > 10)) {
      found.push(`${changing.join(',')} ${layer.path}`);
    }
  }
  return found;
}

describe('structure: the dashboard pipeline', () => {
  it('every dashboard route that can change state has the same-origin check (or names why not) and the form parser before its handler', () => {
    const { router } = installed();
    const changing = layersOf(router).filter((layer) => layer.path.startsWith(DASHBOARD_PATH) && layer.methods.some((method) => !SAFE.has(method)));
    assert.ok(changing.length >= 20, `${changing.length} state-changing dashboard routes found`);
    assert.deepEqual(unguarded(router), []);
    for (const layer of changing) {
      const check = layer.stack.findIndex((step) => tagged([step], ORIGIN_CHECK) || tagged([step], ORIGIN_CHECK_OPT_OUT));
      assert.equal(check, 0, `${layer.path}: the origin check is the route's first step`);
      assert.ok(layer.stack.length >= 3, `${layer.path}: the form parser and the handler follow it`);
    }
    // The opt-outs, each with its reason: only the not-found page today.
    const optOuts = changing.filter((layer) => tagged(layer.stack, ORIGIN_CHECK_OPT_OUT)).map((layer) => layer.path);
    assert.deepEqual(optOuts, [`${DASHBOARD_PATH}/{*rest}`]);
  });

  it('the error pages and the per-client limit run before every dashboard route', () => {
    const { router } = installed();
    const layers = layersOf(router);
    const first = layers.findIndex((layer) => layer.path.startsWith(DASHBOARD_PATH));
    // router.use(R, htmlErrors, clientLimit): one layer per step, for every method, before any route.
    const uses = layers.slice(first, first + 2);
    assert.deepEqual(
      uses.map((layer) => [layer.path, layer.methods.length, layer.stack.length]),
      [
        [DASHBOARD_PATH, 0, 1],
        [DASHBOARD_PATH, 0, 1],
      ],
    );
    assert.ok(
      layers.slice(first + 2).every((layer) => layer.methods.length > 0),
      'every later dashboard layer is a route',
    );
  });

  it('the walker finds a POST registered past the dashboard router (without the origin check)', () => {
    const { router } = installed();
    router.post(`${DASHBOARD_PATH}/stores/:storeId/forgotten`, async (ctx) => {
      ctx.body = 'changed';
    });
    assert.deepEqual(unguarded(router), [`POST ${DASHBOARD_PATH}/stores/:storeId/forgotten`]);
  });
});
