// Request validation at the edge: ajv compiles the JSON Schemas once; the first failure becomes
// a KassaError with the field's own code and the offending param as a dotted path.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { type ErrorCode, KassaError } from '../errors.ts';
import { FIELD_CODES } from './schemas/payments.schema.ts';

// ajv-formats is CommonJS: at run time the default import is the plugin function itself.
type FormatsPlugin = (ajv: Ajv, formats: string[]) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? addFormatsModule) as unknown as FormatsPlugin;

const ajv = new Ajv({ allErrors: false, strict: true, coerceTypes: false, useDefaults: false });
addFormats(ajv, ['uri', 'uuid', 'date-time']);
// A time as the list's created_after takes it: starts like RFC 3339 (date, then T) and parses.
ajv.addFormat('kassa-time', (text: string) => /^\d{4}-\d{2}-\d{2}T/.test(text) && !Number.isNaN(new Date(text).getTime()));

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

/** Validates `body` against `schema` (compiled once) and returns it typed, or throws the KassaError. */
export function validateBody<T>(schema: object, body: unknown): T {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  const value = body === undefined || body === null ? {} : body;
  if (!validate(value)) throw errorFor(validate.errors![0]!);
  return value as T;
}

/** A query string's schema, and the code and message of each parameter's failures. */
export interface QueryDefinition {
  schema: { type: 'object'; additionalProperties: false; properties: Record<string, object> };
  fields: Record<string, { code: ErrorCode; message: string }>;
}

/**
 * Validates a query string (Koa's `ctx.query`: a repeated parameter is an array, which no
 * parameter schema accepts) and returns it typed, or throws the parameter's own error.
 */
export function validateQuery<T>(definition: QueryDefinition, query: unknown): T {
  let validate = compiled.get(definition.schema);
  if (!validate) {
    validate = ajv.compile(definition.schema);
    compiled.set(definition.schema, validate);
  }
  const value = { ...(query as object) };
  if (validate(value)) return value as T;
  const error = validate.errors![0]!;
  if (error.keyword === 'additionalProperties') {
    const name = String(error.params.additionalProperty);
    throw new KassaError('unknown_parameter', `${name} is not a known query parameter.`, { param: name });
  }
  const name = error.instancePath.split('/')[1]!;
  const field = definition.fields[name]!;
  throw new KassaError(field.code, field.message, { param: name });
}
