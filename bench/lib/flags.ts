// Command-line flags of the benchmarks: --help prints the usage; a bad flag or value prints one
// line and the usage, and exits 2.
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

type Values<T extends ParseArgsOptionsConfig> = ReturnType<typeof parseArgs<{ options: T; strict: true }>>['values'];

export function benchFlags<T extends ParseArgsOptionsConfig>(usageText: string, options: T): { flags: Values<T>; usage: (message: string) => never } {
  const usage = (message: string): never => {
    process.stderr.write(`bench: ${message}\n${usageText}\n`);
    process.exit(2);
  };
  if (process.argv.includes('--help')) {
    process.stdout.write(`${usageText}\n`);
    process.exit(0);
  }
  try {
    return { flags: parseArgs({ options, strict: true }).values as Values<T>, usage };
  } catch (error) {
    return usage((error as Error).message);
  }
}
