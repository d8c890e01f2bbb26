// The "same SQL" baseline of bench/api: the statements one Kassa request sends, recorded from the
// real code path, turned into a pgbench script that replays them (one transaction where Kassa
// has one), so that pgbench's rate says what PostgreSQL and a minimal client can do with exactly
// Kassa's SQL, and the ratio to it says what Kassa's own layers (HTTP, auth, validation, slonik,
// node-postgres, JSON) cost on top.
import pg from 'pg';
import type { Interceptor } from 'slonik';

/** node-postgres's own conversion of a parameter to its text form (arrays, dates, buffers…). */
const { prepareValue } = (pg as unknown as { utils: { prepareValue: (value: unknown) => string | Buffer | null } }).utils;

export interface RecordedStatement {
  /** The text as sent, with $1…$n placeholders. */
  sql: string;
  values: readonly unknown[];
}

/** A slonik interceptor that records every statement it sees, in order. */
export function statementRecorder(): { interceptor: Interceptor; statements: RecordedStatement[] } {
  const statements: RecordedStatement[] = [];
  const interceptor: Interceptor = {
    name: 'bench-statement-recorder',
    beforeQueryExecution: (_context, query) => {
      statements.push({ sql: query.sql, values: [...query.values] });
      return null;
    },
  };
  return { interceptor, statements };
}

/**
 * A recorded value that changes from one request to the next (the payment id, the idempotency
 * key, the deposit address…) and the SQL expression over pgbench variables that stands for it in
 * the replay. A parameter that equals `value` becomes `expression`; one that contains it becomes a
 * concatenation around it.
 */
export interface Substitution {
  value: string;
  expression: string;
  /** Only a parameter equal to `value` (for short values such as a number)… */
  exact?: boolean;
  /** …and only in statements whose text matches. */
  only?: RegExp;
}

export interface ReplayStatement extends RecordedStatement {
  /** pgbench `\gset`: the statement's one result row sets variables named after its columns. */
  gset?: boolean;
}

const quote = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/**
 * A literal for pgbench. pgbench reads `:name` anywhere in a command as a variable (it does not
 * parse SQL strings), so a colon followed by a name character is written as chr(58).
 */
export function literal(text: string): string {
  return text
    .split(/:(?=[A-Za-z0-9_])/)
    .map(quote)
    .join(' || chr(58) || ');
}

function parameter(statement: string, value: unknown, substitutions: readonly Substitution[]): string {
  const prepared = prepareValue(value);
  if (prepared === null || prepared === undefined) return 'null';
  const text = Buffer.isBuffer(prepared) ? `\\x${prepared.toString('hex')}` : String(prepared);
  for (const { value: recorded, expression, exact, only } of substitutions) {
    if (recorded === '' || !text.includes(recorded) || (exact && text !== recorded) || (only && !only.test(statement))) continue;
    if (text === recorded) return expression;
    const parts = text.split(recorded).map((part) => (part === '' ? null : literal(part)));
    const pieces: string[] = [];
    parts.forEach((part, index) => {
      if (index > 0) pieces.push(expression);
      if (part !== null) pieces.push(part);
    });
    return `(${pieces.join(' || ')})`;
  }
  return literal(text);
}

/**
 * The pgbench script: one line per statement, its $n placeholders replaced by literals or by the
 * substitutions' expressions, `begin;`/`commit;` around it when `transaction` is set.
 */
export function replayScript(
  statements: readonly ReplayStatement[],
  options: { substitutions: readonly Substitution[]; transaction: boolean; prelude?: string[] },
): string {
  // Longest first, so a value that contains another is replaced whole.
  const substitutions = [...options.substitutions].sort((a, b) => b.value.length - a.value.length);
  const lines: string[] = [...(options.prelude ?? [])];
  if (options.transaction) lines.push('begin;');
  for (const statement of statements) {
    // The statement's own string literals too (e.g. a queue name 'webhooks:endpoint:' || id): pgbench
    // would read their `:name` as a variable.
    const text = statement.sql
      .replace(/'(?:[^']|'')*'/g, (quoted) => literal(quoted.slice(1, -1).replaceAll("''", "'")))
      .replace(/\$(\d+)/g, (_match, position: string) => {
        const index = Number(position) - 1;
        if (index >= statement.values.length) throw new Error(`statement has no value for $${position}: ${statement.sql}`);
        return parameter(statement.sql, statement.values[index], substitutions);
      })
      .replace(/\s+/g, ' ')
      .trim()
      .replace(/;$/, '');
    lines.push(statement.gset ? `${text} \\gset` : `${text};`);
  }
  if (options.transaction) lines.push('commit;');
  return `${lines.join('\n')}\n`;
}

/** One parameter of a statement the lean server replays: fixed text, or text with per-request values in it. */
export type LeanValue = null | { text: string } | { hex: string } | { parts: Array<string | { value: string }> };

export interface LeanStatement {
  sql: string;
  values: LeanValue[];
  /** The column of this statement's one row that later statements' values are computed from (the derivation index). */
  gset?: string;
}

/**
 * The same statements for bench/lib/lean-server.ts (the leanest Node server doing Kassa's work):
 * each parameter as node-postgres would send it, the recorded per-request values (named by
 * `substitutions`' `name`) marked where they occur, so the server fills in fresh ones per request
 * without searching strings.
 */
export function leanStatements(
  statements: readonly ReplayStatement[],
  substitutions: ReadonlyArray<Substitution & { name: string }>,
  gsetColumn?: string,
): LeanStatement[] {
  const ordered = [...substitutions].sort((a, b) => b.value.length - a.value.length);
  return statements.map((statement) => ({
    sql: statement.sql,
    ...(statement.gset && gsetColumn ? { gset: gsetColumn } : {}),
    values: statement.values.map((value): LeanValue => {
      const prepared = prepareValue(value);
      if (prepared === null || prepared === undefined) return null;
      if (Buffer.isBuffer(prepared)) return { hex: prepared.toString('hex') };
      const text = String(prepared);
      for (const { value: recorded, name, exact, only } of ordered) {
        if (recorded === '' || !text.includes(recorded) || (exact && text !== recorded) || (only && !only.test(statement.sql))) continue;
        const parts: Array<string | { value: string }> = [];
        text.split(recorded).forEach((part, index) => {
          if (index > 0) parts.push({ value: name });
          if (part !== '') parts.push(part);
        });
        return { parts };
      }
      return { text };
    }),
  }));
}
