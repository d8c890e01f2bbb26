// Run once to write the jetton master rows of migration "coins and prices" (not shipped, not run
// by Kassa): reads the masters from tonkeeper/ton-assets as they are in git, derives every form
// with @ton/core, and prints the SQL values. No address in that migration is typed by hand.
//
//   node migrations/scripts/jetton-masters-from-ton-assets.ts /path/to/ton-assets.git [commit]
//
// Also prints the sandbox chain's DYOR master once its metadata says 15 decimals (the sandbox
// deploys its masters from SANDBOX_JETTONS; a different `decimals` is a different master address).
import { execFileSync } from 'node:child_process';
import { Address } from '@ton/core';
import { parse } from 'yaml';
import { SandboxChain } from '../../src/chain/sandbox/chain.ts';

const [gitDir, commit = 'HEAD'] = process.argv.slice(2);
if (!gitDir) throw new Error('usage: jetton-masters-from-ton-assets.ts GIT_DIR [COMMIT]');

const show = (file: string): unknown => parse(execFileSync('git', ['--git-dir', gitDir, 'show', `${commit}:${file}`], { encoding: 'utf8' }));
const resolved = execFileSync('git', ['--git-dir', gitDir, 'rev-parse', commit], { encoding: 'utf8' }).trim();

type Entry = { symbol?: string; address?: string };
const single = (file: string): Entry => show(file) as Entry;
const fromList = (file: string, pick: (entries: Entry[]) => Entry | undefined): Entry => {
  const entry = pick(show(file) as Entry[]);
  if (!entry) throw new Error(`${file}: entry not found`);
  return entry;
};

const sources: { coin: string; file: string; entry: Entry }[] = [
  { coin: 'BUILD', file: 'jettons/BUILD.yaml', entry: single('jettons/BUILD.yaml') },
  { coin: 'BLUM', file: 'jettons/blum_launchpad.yaml', entry: fromList('jettons/blum_launchpad.yaml', (list) => list.find((e) => e.symbol === 'BLUM')) },
  { coin: 'DUST', file: 'jettons/DUST.yaml', entry: single('jettons/DUST.yaml') },
  { coin: 'DYOR', file: 'jettons/DYOR.yaml', entry: single('jettons/DYOR.yaml') },
  { coin: 'XAUt0', file: 'jettons/tether-usdt.yaml (second entry)', entry: fromList('jettons/tether-usdt.yaml', (list) => list[1]) },
];

console.log(`-- tonkeeper/ton-assets ${resolved}`);
for (const { coin, file, entry } of sources) {
  if (!entry.address) throw new Error(`${file}: no address`);
  const address = Address.parse(entry.address);
  if (address.workChain !== 0) throw new Error(`${coin}: not a basechain address`);
  const friendly = address.toString({ urlSafe: true, bounceable: true, testOnly: false });
  console.log(`  ('${coin}', 'mainnet', '${address.toRawString()}'), -- ${friendly} (${file}: ${entry.address}, symbol ${entry.symbol})`);
}

const chain = await SandboxChain.create();
console.log(`-- sandbox DYOR master: ${chain.jettonMasters().DYOR}`);
