import type { OAuthClientConfig } from "../config-schema.js";
import { verifyAgainstDummy, verifySecret } from "../secret-hash.js";
import { OAuthError } from "./oauth-error.js";
import { clientCredentials } from "./token-request.js";

/**
 * Client authentication of the token and revocation endpoints. A
 * confidential client proves its secret (Basic or body); a public client
 * (no `secretHash` in the config) names itself by `client_id` only and may
 * not send a secret. Unknown clients cost the same scrypt work as known ones.
 */
export async function authenticateClient(
  clients: ReadonlyMap<string, OAuthClientConfig>,
  params: Map<string, string>,
  authorization: string | undefined,
): Promise<OAuthClientConfig> {
  const creds = clientCredentials(params, authorization);
  const client = clients.get(creds.clientId);
  if (client && !client.secretHash) {
    if (creds.clientSecret !== undefined) throw new OAuthError("invalid_client", "this client is public and has no secret; send client_id only");
    return client;
  }
  if (creds.clientSecret === undefined) {
    await verifyAgainstDummy("");
    throw new OAuthError("invalid_client", "client authentication failed");
  }
  const valid = client?.secretHash ? await verifySecret(creds.clientSecret, client.secretHash) : await verifyAgainstDummy(creds.clientSecret);
  if (!client || !valid) throw new OAuthError("invalid_client", "client authentication failed");
  return client;
}
