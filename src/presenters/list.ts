// The list envelopes: `{"data": [...]}`, and a page of a longer list (payments, payment links, …)
// `{"data": [...], "has_more"}`.
export const listSchema = (items: object) => ({ type: 'object', required: ['data'], properties: { data: { type: 'array', items } } }) as const;

export const pageSchema = (items: object) =>
  ({ type: 'object', required: ['data', 'has_more'], properties: { data: { type: 'array', items }, has_more: { type: 'boolean' } } }) as const;

export const presentList = <T>(data: readonly T[]): { data: readonly T[] } => ({ data });

export const presentPage = <T>(data: readonly T[], hasMore: boolean): { data: readonly T[]; has_more: boolean } => ({ data, has_more: hasMore });
