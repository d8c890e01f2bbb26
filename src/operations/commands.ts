// The operator's commands `kassa doctor` and `kassa coins …`, registered by src/cli.ts, which hands
// over its argument parser, database opener and printer.
import type { Config, TonNetwork } from '../config.ts';
import type { DatabasePool } from '../db/pool.ts';
import type { Logger } from '../log.ts';
import { coinSymbol } from '../money.ts';

type Options = Record<string, { type: 'string' | 'boolean' }>;

interface OperationsContext {
  config: Config;
  /** What reading the configuration found wrong: `doctor` shows them as failed checks; the other commands are not run with any. */
  configProblems: readonly string[];
  log: Logger;
  /** cli.ts's strict parser: unknown options and a wrong number of positionals are usage errors. */
  parse(args: string[], options: Options, positionals?: number): { values: Record<string, string | boolean | undefined>; positionals: string[] };
  withDatabase<T>(work: (pool: DatabasePool) => Promise<T>): Promise<T>;
  usage(message: string): Error;
  print(document: unknown): void;
}

/** Some check failed: the report is printed, this is the one line on stderr (exit 1). */
class DoctorFailed extends Error {
  override name = 'DoctorFailed';
}

/**
 * Runs `doctor` or `coins …` and returns the exit code; undefined for any other command. Each loads
 * what it uses: the doctor and `coins set-master` ask the chain (the chain client, the treasury's
 * rules), the other `coins` commands only read and write the coins' rows.
 */
export async function runOperationsCommand(argv: string[], ctx: OperationsContext): Promise<number | undefined> {
  const [command, sub, ...rest] = argv;
  if (command === 'doctor') {
    ctx.parse(argv.slice(1), {});
    const { doctorReport, formatReport } = await import('./doctor.ts');
    const report = await doctorReport(ctx.config, ctx.configProblems, ctx.log);
    process.stdout.write(formatReport(report));
    const failed = report.checks.filter((check) => check.status === 'fail').map((check) => check.check);
    if (failed.length > 0) throw new DoctorFailed(`doctor: ${failed.length} check(s) failed: ${failed.join(', ')}`);
    return 0;
  }
  if (command === 'coins' && sub === 'list') {
    ctx.parse(rest, {});
    const { listCoins } = await import('./coins.ts');
    ctx.print(await ctx.withDatabase((pool) => listCoins(pool)));
    return 0;
  }
  if (command === 'coins' && sub === 'set-master') {
    const { values, positionals } = ctx.parse(rest, { network: { type: 'string' } }, 2);
    const [{ NETWORKS, setMaster }, { doctorChainClient }] = await Promise.all([import('./coins.ts'), import('./doctor.ts')]);
    const network = values.network;
    if (typeof network !== 'string' || !(NETWORKS as readonly string[]).includes(network)) throw ctx.usage('--network mainnet|testnet|sandbox is required');
    const [typed, address] = positionals as [string, string];
    const coin = coinSymbol(typed);
    ctx.print(
      await ctx.withDatabase((pool) =>
        setMaster(pool, { coin, network: network as TonNetwork, address }, { network: ctx.config.tonNetwork, client: doctorChainClient(ctx.config, pool) }),
      ),
    );
    return 0;
  }
  if (command === 'coins' && sub === 'set-price-id') {
    const { positionals } = ctx.parse(rest, {}, 2);
    const [typed, id] = positionals as [string, string];
    const coin = coinSymbol(typed);
    const { setPriceId } = await import('./coins.ts');
    ctx.print(await ctx.withDatabase((pool) => setPriceId(pool, { coin, id: id === 'none' ? null : id })));
    return 0;
  }
  return undefined;
}
