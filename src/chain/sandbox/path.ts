/** Where the sandbox chain answers as toncenter (v2 JSON-RPC and v3), under the API's base URL. */
export const SANDBOX_TONCENTER_PATH = '/sandbox/toncenter';
export const SANDBOX_JSON_RPC_PATH = `${SANDBOX_TONCENTER_PATH}/api/v2/jsonRPC`;
