// Checks a response against the served OpenAPI document (GET /openapi.json): a documented path
// and method must document the status it answered, and a JSON body must match the documented
// schema, with no property the schema does not name (objects are closed here unless they say
// otherwise), and a documented required header must be there. test/helpers/app.ts runs it on every response the HTTP suites see, so the document
// cannot drift from what the server answers. Paths the document does not list (the sandbox's
// controls, /metrics, the checkout's HTML and assets) are not checked.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

type FormatsPlugin = (ajv: Ajv2020, formats: string[]) => Ajv2020;
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? addFormatsModule) as unknown as FormatsPlugin;

interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: unknown }>; headers?: Record<string, { required?: boolean }> }>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
}

export type ResponseChecker = (method: string, url: string, status: number, headers: Headers, text: string) => string[];

const pointer = (...parts: string[]): string => parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/** A copy of `schema` in which every object schema that lists properties allows no others. */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy = Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      key === 'properties' ? Object.fromEntries(Object.entries(value as object).map(([name, property]) => [name, closed(property)])) : closed(value),
    ]),
  );
  if ('properties' in copy && !('additionalProperties' in copy)) copy.additionalProperties = false;
  return copy;
}

export function responseChecker(document: OpenApiDocument): ResponseChecker {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv, ['uri', 'uuid', 'date-time']);
  ajv.addSchema({ ...(closed(document) as object), $id: 'openapi' });
  const compiled = new Map<string, ValidateFunction>();
  // Literal paths first: /v1/payments/methods is not /v1/payments/{paymentID}.
  const templates = Object.keys(document.paths)
    .sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0))
    .map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
    }));
  return (method, url, status, headers, text) => {
    const contentType = headers.get('content-type');
    const path = new URL(url, 'http://x').pathname;
    const found = templates.find(({ pattern }) => pattern.test(path));
    if (!found) return [];
    const verb = method.toLowerCase();
    const operation = document.paths[found.template]![verb === 'head' ? 'get' : verb];
    const where = `${method} ${path} (${found.template}) → ${status}`;
    if (!operation) return status === 405 || status === 404 ? [] : [`${where}: the document has no ${verb} operation`];
    const key = String(status) in (operation.responses ?? {}) ? String(status) : 'default' in (operation.responses ?? {}) ? 'default' : null;
    if (key === null) return [`${where}: the status is not documented (documented: ${Object.keys(operation.responses ?? {}).join(', ')})`];
    const { content, headers: documented = {} } = operation.responses![key]!;
    const missing = Object.entries(documented).filter(([name, header]) => header.required && !headers.has(name));
    if (missing.length > 0) return missing.map(([name]) => `${where}: the required header ${name} is missing`);
    if (verb === 'head' || text === '' || !contentType?.startsWith('application/json')) return [];
    if (!content?.['application/json']?.schema) return [`${where}: answers JSON, the document gives no JSON schema`];
    const ref = `openapi#/${pointer('paths', found.template, verb, 'responses', key, 'content', 'application/json', 'schema')}`;
    let validate = compiled.get(ref);
    if (!validate) {
      validate = ajv.compile({ $ref: ref });
      compiled.set(ref, validate);
    }
    if (validate(JSON.parse(text))) return [];
    return (validate.errors ?? []).map((error) => `${where}: ${error.instancePath || '(body)'} ${error.message} ${JSON.stringify(error.params)}`);
  };
}
