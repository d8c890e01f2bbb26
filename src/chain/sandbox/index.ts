/**
 * The sandbox TON network. Dev/test only (depends on @ton/sandbox and @ton-community/assets-sdk,
 * which are devDependencies): load it with a dynamic `import()` behind `TON_NETWORK === 'sandbox'`.
 */
export { SandboxChain, SandboxTransferError, SANDBOX_JETTONS, TON_DECIMALS } from './chain.ts';
export type { SandboxCoin, SandboxTransferErrorCode, SandboxTransferRequest, SandboxTransferResult } from './chain.ts';
export { handleJsonRpc } from './jsonrpc.ts';
export type { JsonRpcReply } from './jsonrpc.ts';
export { startSandboxServer, JSON_RPC_PATH } from './server.ts';
export type { SandboxServer } from './server.ts';
