// Payload checks for tasks: payloads may come from older code, so tasks never trust their shape.
import { isUuid } from '../uuid.ts';

/** The UUID in `payload[field]`, lower-cased, or null when the payload has none. */
export function uuidField(payload: unknown, field: string): string | null {
  if (!payload || typeof payload !== 'object') return null;
  const id = (payload as Record<string, unknown>)[field];
  return typeof id === 'string' && isUuid(id) ? id.toLowerCase() : null;
}
