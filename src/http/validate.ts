// Request validation at the edge: `validate({ params, query, body })` on a route line checks the
// path parameters, the query string and the JSON body against their JSON Schemas (each route
// file's sibling `<name>.schema.ts`), compiled once by ajv when the route is installed, and hands
// the handler the validated values on ctx.state; the first failure becomes a KassaError with the
// field's own code and the offending param (a dotted path in a body).
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Middleware } from 'koa';
import { type ErrorCode, KassaError } from '../errors.ts';
import type { KassaState } from './context.ts';
import { FIELD_CODES } from './routes/shared.schema.ts';

// ajv-formats is CommonJS: at run time the default import is the plugin function itself.
type FormatsPlugin = (ajv: Ajv, formats: string[]) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? addFormatsModule) as unknown as FormatsPlugin;

const ajv = new Ajv({ allErrors: false, strict: true, coerceTypes: false, useDefaults: false });
addFormats(ajv, ['uri', 'uuid', 'date-time']);
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

/** `/metadata/color` → `metadata.color`; `/payment_options/methods/0/coin` → `payment_options.methods[0].coin`. */
function toParam(pointer: string, extra?: string): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (extra !== undefined) parts.push(extra);
  return parts.reduce((path, part) => (/^\d+$/.test(part) && path ? `${path}[${part}]` : path ? `${path}.${part}` : part), '');
}

function describe(error: ErrorObject, param: string): string {
  switch (error.keyword) {
    case 'required':
      return `${param} is required.`;
    case 'additionalProperties':
      return `${param} is not a known parameter.`;
    case 'type':
      return `${param} must be ${error.params.type === 'integer' ? 'an integer' : `a${/^[aeiou]/.test(String(error.params.type)) ? 'n' : ''} ${error.params.type}`}.`;
    case 'enum':
      return `${param} must be one of ${(error.params.allowedValues as unknown[]).join(', ')}.`;
    case 'pattern':
      return `${param} must be a positive decimal string without leading zeros, e.g. "10.50".`;
    case 'maxLength':
      return `${param} must be at most ${error.params.limit} characters.`;
    case 'minLength':
      return `${param} must not be empty.`;
    case 'minimum':
    case 'maximum':
      return `${param} must be from 900 to 43200.`;
    case 'maxProperties':
      return `${param} may have at most ${error.params.limit} keys.`;
    case 'propertyNames':
      return `${param} keys must be 1 to 64 characters.`;
    case 'minItems':
    case 'maxItems':
      return `${param} must have exactly one entry.`;
    case 'format':
      return error.params.format === 'uuid' ? `${param} must be a UUID.` : `${param} must be an absolute URL.`;
    default:
      return `${param} is invalid.`;
  }
}

export function errorFor(error: ErrorObject): KassaError {
  let param: string;
  let code: ErrorCode;
  if (error.keyword === 'required') {
    param = toParam(error.instancePath, String(error.params.missingProperty));
    code = error.instancePath === '' ? 'missing_parameter' : (FIELD_CODES[param.split(/[.[]/)[0]!] ?? 'missing_parameter');
  } else if (error.keyword === 'additionalProperties') {
    param = toParam(error.instancePath, String(error.params.additionalProperty));
    code = 'unknown_parameter';
  } else if (error.instancePath === '') {
    return new KassaError('invalid_json', 'The request body must be a JSON object.');
  } else {
    param = toParam(error.instancePath);
    const top = param.split(/[.[]/)[0]!;
    code = FIELD_CODES[top] ?? 'invalid_request';
  }
  const message =
    error.propertyName !== undefined ? `${param} keys must be 1 to 64 characters ("${error.propertyName.slice(0, 80)}" is not).` : describe(error, param);
  return new KassaError(code, message, { param });
}

const compiled = new Map<object, ValidateFunction>();

/** The schema's validator, compiled the first time it is asked for (at route installation). */
function compiledValidator(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** A JSON body's check: `body` (none is `{}`) typed, or the KassaError of its first failure. */
function bodyCheck(schema: object): (body: unknown) => unknown {
  const validate = compiledValidator(schema);
  return (body) => {
    const value = body === undefined || body === null ? {} : body;
    if (!validate(value)) throw errorFor(validate.errors![0]!);
    return value;
  };
}

/** A query string's schema, and the code and message of each parameter's failures. */
export interface QueryDefinition {
  /** `additionalProperties: false` refuses an unknown parameter (unknown_parameter); `true` leaves others alone. */
  schema: { type: 'object'; additionalProperties: boolean; required?: readonly string[]; properties: Record<string, object> };
  fields: Record<string, { code: ErrorCode; message: string }>;
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
function queryCheck(definition: QueryDefinition): (query: unknown) => unknown {
  const validate = compiledValidator(definition.schema);
  return (query) => {
    const value = { ...(query as object) };
    if (validate(value)) return value;
    const error = validate.errors![0]!;
    if (error.keyword === 'additionalProperties') {
      const name = String(error.params.additionalProperty);
      throw new KassaError('unknown_parameter', `${name} is not a known query parameter.`, { param: name });
    }
    const name = error.keyword === 'required' ? String(error.params.missingProperty) : error.instancePath.split('/')[1]!;
    const field = definition.fields[name]!;
    throw new KassaError(field.code, field.message, { param: name });
  };
}

/**
 * Path parameters' schema, and each parameter's error: its code, message and the name docs/API.md
 * knows it by (`:id` is `paymentID`). A parameter of format `uuid` is handed on lower-case.
 */
export interface ParamsDefinition {
  schema: { type: 'object'; additionalProperties: false; required: readonly string[]; properties: Record<string, { type: 'string'; format?: string }> };
  fields: Record<string, { code: ErrorCode; message: string; param: string }>;
}

function paramsCheck(definition: ParamsDefinition): (params: Record<string, string>) => Record<string, string> {
  const validate = compiledValidator(definition.schema);
  const uuids = Object.entries(definition.schema.properties)
    .filter(([, schema]) => schema.format === 'uuid')
    .map(([name]) => name);
  return (params) => {
    if (!validate(params)) {
      const error = validate.errors![0]!;
      const name = error.keyword === 'required' ? String(error.params.missingProperty) : error.instancePath.split('/')[1]!;
      const field = definition.fields[name]!;
      throw new KassaError(field.code, field.message, { param: field.param });
    }
    const value = { ...params };
    for (const name of uuids) value[name] = value[name]!.toLowerCase();
    return value;
  };
}

/**
 * The validation step of a route: the path parameters, then the query string, then the body, each
 * against its schema; the validated values go to `ctx.state.params`, `.query` and `.body` (typed
 * in the handler with the types the schema files derive). Validators are compiled here, once.
 */
export function validate(schemas: { params?: ParamsDefinition; query?: QueryDefinition; body?: object }): Middleware<KassaState> {
  const params = schemas.params && paramsCheck(schemas.params);
  const query = schemas.query && queryCheck(schemas.query);
  const body = schemas.body && bodyCheck(schemas.body);
  return async (ctx, next) => {
    if (params) ctx.state.params = params((ctx as unknown as { params: Record<string, string> }).params);
    if (query) ctx.state.query = query(ctx.query);
    if (body) ctx.state.body = body(ctx.request.body);
    await next();
  };
}
