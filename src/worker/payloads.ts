// Payload checks for tasks: payloads may come from older code, so tasks never trust their shape.
import { isUuid } from '../uuid.ts';

function field(payload: unknown, name: string): unknown {
  return payload && typeof payload === 'object' ? (payload as Record<string, unknown>)[name] : undefined;
}

/** The UUID in `payload[name]`, lower-cased, or null when the payload has none. */
export function uuidField(payload: unknown, name: string): string | null {
  const id = field(payload, name);
  return typeof id === 'string' && isUuid(id) ? id.toLowerCase() : null;
}

/** An account's raw address as Kassa stores it (`<workchain>:<64 lower-case hex>`). */
const RAW_ADDRESS = /^-?\d+:[0-9a-f]{64}$/;

/** The raw address in `payload[name]`, or null when the payload has none. */
export function rawAddressField(payload: unknown, name: string): string | null {
  const address = field(payload, name);
  return typeof address === 'string' && RAW_ADDRESS.test(address) ? address : null;
}
