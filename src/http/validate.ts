// Request validation at the edge: `validate({ params, query, body })` on a route line checks the
// path parameters, the query string and the JSON body against their JSON Schemas (each route
// file's sibling `<name>.schema.ts`), compiled once by ajv when the route is installed, and hands
// the handler the validated values on ctx.state; the first failure becomes a KassaError with the
// field's own code and the offending param (a dotted path in a body). A field's code is written on
// its schema (`errorCode`, below), so two routes' fields of one name can have different codes.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Middleware } from 'koa';
import { ERROR_CODES, type ErrorCode, fieldBreaksRule, KassaError } from '../errors.ts';
import { coinSymbol } from '../money.ts';
import type { KassaState } from './context.ts';

// ajv-formats is CommonJS: at run time the default import is the plugin function itself.
type FormatsPlugin = (ajv: Ajv, formats: string[]) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? addFormatsModule) as unknown as FormatsPlugin;

const ajv = new Ajv({ allErrors: false, strict: true, coerceTypes: false, useDefaults: false });
addFormats(ajv, ['uri', 'uuid', 'date-time']);
// Kassa's annotations on request schemas (they check nothing; the OpenAPI document leaves them out):
// `errorCode` on a property is the catalogue code (src/errors.ts) its failures get — a body field's,
// anything inside it included, unless something deeper names its own; a path or query parameter's,
// its absence included. A body field without one fails as invalid_request (missing: missing_parameter).
// `errorParam` on a path parameter is the name docs/API.md and errors know it by (`:id` is `paymentID`).
ajv.addKeyword({ keyword: 'errorCode', schemaType: 'string', metaSchema: { enum: ERROR_CODES } });
ajv.addKeyword({ keyword: 'errorParam', schemaType: 'string' });
// `coinSymbol: true` on a string field that takes a coin's ticker (a currency, a method's coin, a
// refund's coin): another ticker of a coin (money.ts COIN_ALIASES: `GRAM`) is replaced, in the
// validated value itself, by the one the books know (`TON`), so every handler and command after it
// sees `TON` only. It refuses nothing.
ajv.addKeyword({
  keyword: 'coinSymbol',
  schemaType: 'boolean',
  modifying: true,
  errors: false,
  validate: (enabled: boolean, data: unknown, _schema: unknown, context?: { parentData?: unknown; parentDataProperty?: string | number }) => {
    if (enabled && typeof data === 'string' && context?.parentData !== undefined && context.parentDataProperty !== undefined) {
      const symbol = coinSymbol(data);
      if (symbol !== data) (context.parentData as Record<string | number, unknown>)[context.parentDataProperty] = symbol;
    }
    return true;
  },
});

/** A request schema as validate.ts walks it to find a field's code. */
interface SchemaNode {
  errorCode?: ErrorCode;
  errorParam?: string;
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode | boolean;
  items?: SchemaNode;
}

/**
 * The code of the field at `path` (the JSON Pointer segments of a body's value) under `schema`: the
 * deepest `errorCode` on the way to it, or undefined when none is.
 */
export function codeAt(schema: object, path: readonly string[]): ErrorCode | undefined {
  let node = schema as SchemaNode;
  let code = node.errorCode;
  for (const segment of path) {
    // Own keys only: a body's field may be called `constructor` or `__proto__`.
    const next =
      node.properties && Object.hasOwn(node.properties, segment)
        ? node.properties[segment]
        : node.items && /^\d+$/.test(segment)
          ? node.items
          : typeof node.additionalProperties === 'object'
            ? node.additionalProperties
            : undefined;
    if (next === undefined) return code;
    node = next;
    code = node.errorCode ?? code;
  }
  return code;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * An RFC 3339 date-time (§5.6) as the instant it names, or null: a real calendar date, hours 00 to
 * 23, an offset (`Z`, `z` or ±hh:mm), `T` or `t` between date and time (both are RFC 3339), a leap
 * second (:60) only at 23:59 UTC. `2026-02-30…` and `T24:00:00Z` are refused (JavaScript's Date
 * would roll them over).
 */
export function parseRfc3339(text: string): Date | null {
  const match = RFC3339.exec(text);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (month < 1 || month > 12 || day < 1 || day > (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!)) return null;
  const sign = match[8] === '-' ? -1 : 1;
  const offsetMinutes = match[8] ? sign * (Number(match[9]) * 60 + Number(match[10])) : 0;
  if (hour > 23 || minute > 59 || second > 60 || Number(match[9] ?? 0) > 23 || Number(match[10] ?? 0) > 59) return null;
  const utcMinutes = (((hour * 60 + minute - offsetMinutes) % 1440) + 1440) % 1440;
  if (second === 60 && utcMinutes !== 1439) return null;
  const fraction = match[7] ? Math.floor(Number(match[7]) * 1000) : 0;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second, fraction) - offsetMinutes * 60_000;
  return Number.isNaN(ms) ? null : new Date(ms);
}

// A time as the list's created_after takes it: RFC 3339 exactly (published as `date-time`).
ajv.addFormat('kassa-time', (text: string) => parseRfc3339(text) !== null);
// A calendar day (YYYY-MM-DD, year 0001 on: PostgreSQL has no year 0): the dashboard's list filters.
ajv.addFormat('kassa-day', (text: string) => /^\d{4}-\d{2}-\d{2}$/.test(text) && !text.startsWith('0000') && parseRfc3339(`${text}T00:00:00Z`) !== null);

/** A pointer's segments: `/payment_options/methods/0` → payment_options, methods, 0. */
const segmentsOf = (pointer: string): string[] =>
  pointer
    .split('/')
    .slice(1)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));

/** `/metadata/color` → `metadata.color`; `/payment_options/methods/0/coin` → `payment_options.methods[0].coin`. */
function toParam(pointer: string, extra?: string): string {
  const parts = segmentsOf(pointer);
  if (extra !== undefined) parts.push(extra);
  return parts.reduce((path, part) => (/^\d+$/.test(part) && path ? `${path}[${part}]` : path ? `${path}.${part}` : part), '');
}

/** What a field without a code of its own broke, as the schema says it ("must be at most 16 characters"). */
function rule(error: ErrorObject): string {
  const limit = error.params.limit as number;
  switch (error.keyword) {
    case 'type':
      return `must be ${error.params.type === 'integer' ? 'an integer' : `a${/^[aeiou]/.test(String(error.params.type)) ? 'n' : ''} ${error.params.type}`}`;
    case 'enum':
      return `must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`;
    case 'pattern':
      return 'is not written as expected';
    case 'maxLength':
      return `must be at most ${limit} characters`;
    case 'minLength':
      return limit === 1 ? 'must not be empty' : `must be at least ${limit} characters`;
    case 'minimum':
      return `must be at least ${limit}`;
    case 'maximum':
      return `must be at most ${limit}`;
    case 'format':
      if (error.params.format === 'kassa-day') return 'must be a day of the calendar written YYYY-MM-DD';
      return error.params.format === 'uuid' ? 'must be a UUID' : error.params.format === 'uri' ? 'must be an absolute URL' : `must be a ${error.params.format}`;
    default:
      return 'is not valid';
  }
}

/** The error of a body's first failure under `schema`: the field's code (its schema's `errorCode`) and its path as param. */
function errorFor(error: ErrorObject, schema: object): KassaError {
  if (error.keyword === 'additionalProperties') {
    return new KassaError('unknown_parameter', { param: toParam(error.instancePath, String(error.params.additionalProperty)) });
  }
  if (error.keyword === 'required') {
    // Absent from the body: missing_parameter; absent inside a field: that field's code.
    const param = toParam(error.instancePath, String(error.params.missingProperty));
    return new KassaError(codeAt(schema, segmentsOf(error.instancePath)) ?? 'missing_parameter', { param });
  }
  if (error.instancePath === '') return new KassaError('invalid_json');
  const param = toParam(error.instancePath);
  const code = codeAt(schema, segmentsOf(error.instancePath));
  return code === undefined ? fieldBreaksRule(param, rule(error)) : new KassaError(code, { param });
}

/** The error of a path or query parameter's failure: its code (absent, too), under its name (`errorParam`). */
function parameterError(error: ErrorObject, schema: { properties: Record<string, object> }): KassaError {
  if (error.keyword === 'additionalProperties') return new KassaError('unknown_parameter', { param: String(error.params.additionalProperty) });
  const name = error.keyword === 'required' ? String(error.params.missingProperty) : segmentsOf(error.instancePath)[0]!;
  const field = schema.properties[name] as SchemaNode;
  const param = field.errorParam ?? name;
  return field.errorCode === undefined ? fieldBreaksRule(param, rule(error)) : new KassaError(field.errorCode, { param });
}

const compiled = new Map<object, ValidateFunction>();
/** Every schema a route was installed with, compiled or not yet (`compileEveryValidator`). */
const declared = new Set<object>();

/**
 * Every `errorCode` in `schema` is a code of the catalogue (src/errors.ts): checked when the route is
 * installed, since its validator (whose keyword definition checks the same) compiles only on first use.
 */
function assertErrorCodes(schema: unknown): void {
  if (schema === null || typeof schema !== 'object') return;
  for (const [key, value] of Object.entries(schema)) {
    // A field may itself be called `errorCode` (then its value is a schema, walked below).
    if (key === 'errorCode' && typeof value !== 'object' && !(ERROR_CODES as readonly unknown[]).includes(value)) {
      throw new Error(`schema errorCode ${JSON.stringify(value)} is not a code of the catalogue (src/errors.ts)`);
    }
    assertErrorCodes(value);
  }
}

/** Compiles every validator installed so far (a schema ajv refuses throws): the tests' check of every route's schemas. */
export function compileEveryValidator(): number {
  for (const schema of declared) if (!compiled.has(schema)) compiled.set(schema, ajv.compile(schema));
  return declared.size;
}

/**
 * The schema's validator, compiled on its first use and kept for the process (whatever the number of
 * apps): a process compiles only the validators of the routes it is asked for. An app installs ~150
 * routes, and compiling all their schemas up front was most of an app's start-up CPU (a `kassa`
 * process, each test file: ~250 → ~110 ms for the first app of a process). An `errorCode` outside the
 * catalogue is still refused at installation (`assertErrorCodes`), and test/http/route-validation.test.ts
 * compiles every installed schema (`compileEveryValidator`).
 */
function compiledValidator(schema: object): () => ValidateFunction {
  assertErrorCodes(schema);
  declared.add(schema);
  let validate: ValidateFunction | undefined;
  return () => {
    if (validate) return validate;
    validate = compiled.get(schema) ?? ajv.compile(schema);
    compiled.set(schema, validate);
    return validate;
  };
}

/** A JSON body's check: `body` (none is `{}`) typed, or the KassaError of its first failure. */
export function bodyCheck(schema: object): (body: unknown) => unknown {
  const validator = compiledValidator(schema);
  return (body) => {
    const value = body === undefined || body === null ? {} : body;
    const validate = validator();
    if (!validate(value)) throw errorFor(validate.errors![0]!, schema);
    return value;
  };
}

/** A query string's schema (each parameter's `errorCode` on its property). */
export interface QueryDefinition {
  /** `additionalProperties: false` refuses an unknown parameter (unknown_parameter); `true` leaves others alone. */
  schema: { type: 'object'; additionalProperties: boolean; required?: readonly string[]; properties: Record<string, object> };
  /**
   * What the OpenAPI document publishes for a parameter whose check is written for the raw query
   * string (every value arrives as text): e.g. an integer range checked by a pattern. Absent: its schema.
   */
  published?: Record<string, object>;
}

/**
 * A query string's check (Koa's `ctx.query`: a repeated parameter is an array, which no
 * parameter schema accepts): the parameters typed, or the parameter's own error.
 */
export function queryCheck(definition: QueryDefinition): (query: unknown) => unknown {
  const validator = compiledValidator(definition.schema);
  return (query) => {
    const value = { ...(query as object) };
    const validate = validator();
    if (validate(value)) return value;
    throw parameterError(validate.errors![0]!, definition.schema);
  };
}

/**
 * Path parameters' schema: each parameter's `errorCode`, and `errorParam` the name docs/API.md
 * knows it by (`:id` is `paymentID`). A parameter of format `uuid` is handed on lower-case.
 */
export interface ParamsDefinition {
  schema: {
    type: 'object';
    additionalProperties: false;
    required: readonly string[];
    properties: Record<string, { type: 'string'; format?: string; pattern?: string; errorCode: ErrorCode; errorParam?: string }>;
  };
}

export function paramsCheck(definition: ParamsDefinition): (params: Record<string, string>) => Record<string, string> {
  const validator = compiledValidator(definition.schema);
  const uuids = Object.entries(definition.schema.properties)
    .filter(([, schema]) => schema.format === 'uuid')
    .map(([name]) => name);
  return (params) => {
    const validate = validator();
    if (!validate(params)) throw parameterError(validate.errors![0]!, definition.schema);
    const value = { ...params };
    for (const name of uuids) value[name] = value[name]!.toLowerCase();
    return value;
  };
}

/** Where a validation step keeps the body schema it checks (read by `bodySchemaOf`). */
const BODY_SCHEMA = Symbol('body schema');

/**
 * The validation step of a route: the path parameters, then the query string, then the body, each
 * against its schema; the validated values go to `ctx.state.params`, `.query` and `.body` (typed
 * in the handler with the types the schema files derive). Validators are compiled on first use, once.
 */
export function validate(schemas: { params?: ParamsDefinition; query?: QueryDefinition; body?: object }): Middleware<KassaState> {
  const params = schemas.params && paramsCheck(schemas.params);
  const query = schemas.query && queryCheck(schemas.query);
  const body = schemas.body && bodyCheck(schemas.body);
  const step: Middleware<KassaState> = async (ctx, next) => {
    if (params) ctx.state.params = params((ctx as unknown as { params: Record<string, string> }).params);
    if (query) ctx.state.query = query(ctx.query);
    if (body) ctx.state.body = body(ctx.request.body);
    await next();
  };
  return schemas.body ? Object.assign(step, { [BODY_SCHEMA]: schemas.body }) : step;
}

/**
 * The body schema a route's steps validate against, if one does: how a check that runs before the
 * route (the unsafe-text rule, http/plainText.ts) gives a body field the code its route's
 * schema sets.
 */
export function bodySchemaOf(steps: readonly unknown[]): object | undefined {
  for (const step of steps) {
    const schema = (step as { [BODY_SCHEMA]?: object })[BODY_SCHEMA];
    if (schema) return schema;
  }
  return undefined;
}
