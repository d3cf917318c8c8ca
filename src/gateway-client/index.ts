/** Client library for applications calling a relcast gateway with OAuth 2.0. */
export { buildAuthorizationUrl, newState, readRedirect, type AuthorizationUrlInput } from "./authorization-url.js";
export { exchangeCode, refreshTokens, TokenEndpointError, type ClientCredentials, type TokenSet } from "./token-client.js";
export { TokenHolder, type TokenHolderOptions } from "./token-holder.js";
export { filePersistence, memoryPersistence, type TokenPersistence } from "./token-persistence.js";
