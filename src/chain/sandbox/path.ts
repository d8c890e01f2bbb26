/** Where the sandbox chain answers as a toncenter v2 JSON-RPC endpoint, under the API's base URL. */
export const SANDBOX_JSON_RPC_PATH = '/sandbox/toncenter/api/v2/jsonRPC';
