/**
 * `@mkt/kit/http`: the HTTP side of a service — the express app (`createService`), routes mounted
 * from the contracts' endpoint tables (`mountEndpoints`, `operationHandlers`, `handle`), token
 * verification and access keys, request ids and the receipt page.
 */
export { type AccessKeys, staticAccessKeys } from '../http/access-keys';
export { type AuthenticatedUser, bearerToken, type TokenKeys, verifyAccessToken } from '../http/auth';
export { createService } from '../http/create-service';
export { handle, mountedEndpoints, mountEndpoints, type MountOptions, mountRoute } from '../http/endpoints';
export { type MountedHandlers, operationHandlers, type OperationHandlers, operationRequest } from '../http/operations';
export { type ReceiptDocument, sendReceiptPage } from '../http/receipt-page';
export { adminRequestOf, CLIENT_ADDRESS_HEADER, correlationIdOf, requestIdOf, saneIdHeader } from '../http/request-id';
export { parseParts } from '../http/validate';
