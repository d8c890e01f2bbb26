// The merchant's `kassa plan …` and `kassa subscription …` commands, registered by src/cli.ts, which
// hands over its argument parser, database opener and printer. Each prints what the API answers
// (presenters/subscription.ts) and goes through the API's own commands: subscriptions/records.ts
// for plans, subscriptions/commands.ts for subscriptions (their events, the engine's run), with the
// audit row the API writes (actor "cli", via cli).
import type { Config } from '../config.ts';
import type { DatabasePool, Db } from '../db/pool.ts';
import { FormProblem, KassaError } from '../errors.ts';

type Options = Record<string, { type: 'string' | 'boolean' }>;

interface SubscriptionCliContext {
  config: Config;
  now: Date;
  parse(args: string[], options: Options, positionals?: number): { values: Record<string, string | boolean | undefined>; positionals: string[] };
  withDatabase<T>(work: (pool: DatabasePool) => Promise<T>): Promise<T>;
  usage(message: string): Error;
  print(document: unknown): void;
}

/** The intervals and statuses as the API names them. */
const INTERVALS = ['day', 'week', 'month', 'year'];
const STATUSES = ['trialing', 'active', 'past_due', 'expired', 'cancelled'];

/**
 * Runs `plan create|list|archive` or `subscription create|list|show|cancel|credit|portal` and returns the
 * exit code; undefined for any other command.
 */
export async function runSubscriptionCommand(argv: string[], ctx: SubscriptionCliContext): Promise<number | undefined> {
  const [command, sub, ...rest] = argv;
  if (command !== 'plan' && command !== 'subscription') return undefined;
  const { values, positionals } = parse(ctx, command, sub, rest);
  const store = text(ctx, values.store, '--store');
  const [records, commands, presenters, { CLI_ACTOR, recordAudit }] = await Promise.all([
    import('../subscriptions/records.ts'),
    import('../subscriptions/commands.ts'),
    import('../presenters/subscription.ts'),
    import('../dashboard/audit.ts'),
  ]);
  const { config, now } = ctx;
  const present = (row: Parameters<typeof presenters.presentSubscription>[0]) => presenters.presentSubscription(row, config);
  const commandDeps = { config, present };
  const audit = CLI_ACTOR;
  const run = <T>(work: (pool: DatabasePool) => Promise<T>) =>
    ctx.withDatabase(work).catch((error: unknown) => {
      if (error instanceof KassaError) throw new FormProblem(`${error.code}: ${error.message}`);
      throw error;
    });
  /** The subscription as the API shows it (`portalToken`: just issued, its portalURL shown once). */
  const shown = async (pool: Db, id: string, portalToken?: string) => {
    const row = await records.findSubscription(pool, store, id, now);
    if (!row) throw commands.subscriptionNotFound();
    return presenters.presentSubscription(row, config, portalToken);
  };

  if (command === 'plan' && sub === 'create') {
    const input = {
      name: text(ctx, values.name, '--name'),
      currency: text(ctx, values.currency, '--currency').toUpperCase(),
      amount: text(ctx, values.amount, '--amount'),
      interval: oneOf(ctx, text(ctx, values.interval, '--interval'), INTERVALS, '--interval') as 'day' | 'week' | 'month' | 'year',
      ...optionalInt(ctx, values['interval-count'], '--interval-count', 'intervalCount', 1, 365),
      ...optionalInt(ctx, values['trial-days'], '--trial-days', 'trialDays', 0, 365),
      ...optionalInt(ctx, values['grace-days'], '--grace-days', 'graceDays', 0, 90),
      ...optionalInt(ctx, values['reminder-days'], '--reminder-days', 'reminderDays', 0, 90),
    };
    ctx.print(presenters.presentPlan(await run((pool) => pool.transaction((tx) => records.createPlan(tx, config.tonNetwork, store, input, now)))));
    return 0;
  }
  if (command === 'plan' && sub === 'list') {
    ctx.print({ data: (await run((pool) => records.listPlans(pool, store))).map(presenters.presentPlan) });
    return 0;
  }
  if (command === 'plan' && sub === 'archive') {
    const plan = await run((pool) => records.archivePlan(pool, store, positionals[0]!, now));
    if (!plan) throw new FormProblem(`no plan "${positionals[0]}" in store ${store}`);
    ctx.print(presenters.presentPlan(plan));
    return 0;
  }
  if (command === 'subscription' && sub === 'create') {
    const email = values.email === undefined ? {} : { email: text(ctx, values.email, '--email') };
    const telegram = optionalInt(ctx, values['telegram-user-id'], '--telegram-user-id', 'telegramUserID', 1, Number.MAX_SAFE_INTEGER);
    const input = {
      planID: text(ctx, values.plan, '--plan'),
      customer: { reference: text(ctx, values.customer, '--customer'), ...email, ...telegram },
      ...optionalInt(ctx, values['trial-days'], '--trial-days', 'trialDays', 0, 365),
    };
    ctx.print(
      await run((pool) =>
        pool.transaction(async (tx) => {
          const { id, portalToken } = await commands.subscribe(tx, commandDeps, store, input, now);
          return shown(tx, id, portalToken);
        }),
      ),
    );
    return 0;
  }
  if (command === 'subscription' && sub === 'list') {
    const status = values.status === undefined ? {} : { status: oneOf(ctx, text(ctx, values.status, '--status'), STATUSES, '--status') };
    const customer = values.customer === undefined ? {} : { customerReference: text(ctx, values.customer, '--customer') };
    ctx.print({ data: (await run((pool) => records.listSubscriptions(pool, store, { ...status, ...customer }, now))).map(present) });
    return 0;
  }
  if (command === 'subscription' && sub === 'show') {
    const id = positionals[0]!;
    ctx.print(
      await run(async (pool) => ({
        ...(await shown(pool, id)),
        ledger: (await records.listLedger(pool, id)).map(presenters.presentLedgerEntry),
      })),
    );
    return 0;
  }
  if (command === 'subscription' && sub === 'cancel') {
    const id = positionals[0]!;
    const atPeriodEnd = values['at-period-end'] === true;
    ctx.print(
      await run((pool) =>
        pool.transaction(async (tx) => {
          if (await commands.cancelSubscription(tx, commandDeps, store, id, atPeriodEnd, now)) {
            await recordAudit(tx, audit, { storeId: store, action: 'subscription.cancel', subject: id, detail: { atPeriodEnd, via: 'cli' } }, now);
          }
          return shown(tx, id);
        }),
      ),
    );
    return 0;
  }
  if (command === 'subscription' && sub === 'portal') {
    // A new portal link (the old one stops working at once), printed this once, audited as the API's and the dashboard's.
    const id = positionals[0]!;
    ctx.print(
      await run((pool) =>
        pool.transaction(async (tx) => {
          const portalToken = await records.reissuePortalToken(tx, store, id);
          if (portalToken === null) throw commands.subscriptionNotFound();
          await recordAudit(tx, audit, { storeId: store, action: 'subscription.portal_reissue', subject: id, detail: { via: 'cli' } }, now);
          return shown(tx, id, portalToken);
        }),
      ),
    );
    return 0;
  }
  if (command === 'subscription' && sub === 'credit') {
    const id = positionals[0]!;
    const amount = text(ctx, values.amount, '--amount');
    if (!/^\d{1,30}(\.\d{1,18})?$/.test(amount) || Number(amount) <= 0) throw ctx.usage('--amount is a positive decimal, e.g. 9.99');
    const note = text(ctx, values.note, '--note');
    ctx.print(
      await run((pool) =>
        pool.transaction(async (tx) => {
          await commands.creditSubscription(tx, commandDeps, store, id, { amount, note }, audit.name, now);
          await recordAudit(tx, audit, { storeId: store, action: 'subscription.credit', subject: id, detail: { amount, note, via: 'cli' } }, now);
          return shown(tx, id);
        }),
      ),
    );
    return 0;
  }
  return undefined;
}

/** Each command's options and positionals (the id), parsed strictly. */
function parse(ctx: SubscriptionCliContext, command: string, sub: string | undefined, rest: string[]) {
  const store = { store: { type: 'string' as const } };
  const specs: Record<string, [Options, number]> = {
    'plan create': [
      {
        ...store,
        name: { type: 'string' },
        currency: { type: 'string' },
        amount: { type: 'string' },
        interval: { type: 'string' },
        'interval-count': { type: 'string' },
        'trial-days': { type: 'string' },
        'grace-days': { type: 'string' },
        'reminder-days': { type: 'string' },
      },
      0,
    ],
    'plan list': [store, 0],
    'plan archive': [store, 1],
    'subscription create': [
      {
        ...store,
        plan: { type: 'string' },
        customer: { type: 'string' },
        email: { type: 'string' },
        'telegram-user-id': { type: 'string' },
        'trial-days': { type: 'string' },
      },
      0,
    ],
    'subscription list': [{ ...store, status: { type: 'string' }, customer: { type: 'string' } }, 0],
    'subscription show': [store, 1],
    'subscription cancel': [{ ...store, 'at-period-end': { type: 'boolean' } }, 1],
    'subscription portal': [store, 1],
    'subscription credit': [{ ...store, amount: { type: 'string' }, note: { type: 'string' } }, 1],
  };
  const spec = specs[`${command} ${sub ?? ''}`];
  if (!spec) throw ctx.usage(`unknown command "${[command, sub].filter(Boolean).join(' ')}" (run "kassa help" for the list)`);
  const parsed = ctx.parse(rest, spec[0], spec[1]);
  for (const id of parsed.positionals) {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) throw ctx.usage(`"${id}" is not an id`);
  }
  return { values: parsed.values, positionals: parsed.positionals.map((id) => id.toLowerCase()) };
}

function text(ctx: SubscriptionCliContext, value: string | boolean | undefined, flag: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw ctx.usage(`${flag} is required`);
  return value.trim();
}

function oneOf(ctx: SubscriptionCliContext, value: string, allowed: string[], flag: string): string {
  if (!allowed.includes(value)) throw ctx.usage(`${flag} is one of ${allowed.join(', ')}`);
  return value;
}

function optionalInt<K extends string>(
  ctx: SubscriptionCliContext,
  value: string | boolean | undefined,
  flag: string,
  key: K,
  min: number,
  max: number,
): Partial<Record<K, number>> {
  if (value === undefined) return {};
  const n = typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw ctx.usage(`${flag} is a whole number from ${min} to ${max}`);
  return { [key]: n } as Partial<Record<K, number>>;
}
