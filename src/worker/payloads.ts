// Payload checks for tasks: payloads may come from older code, so tasks never trust their shape.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function paymentIdOf(payload: unknown): string | null {
  if (!payload || typeof payload !== 'object') return null;
  const id = (payload as { paymentId?: unknown }).paymentId;
  return typeof id === 'string' && UUID.test(id) ? id.toLowerCase() : null;
}
