/**
 * Where each sealed secret is stored, as the context it is sealed with (SecretBox): a value
 * opens only in the row and column it was sealed for.
 */
export const webhookSecretContext = (orgId: number) => `webhook_endpoints.secret org=${orgId}`;

export const totpSecretContext = (orgId: number, userId: number) =>
  `user_totp.secret org=${orgId} user=${userId}`;

export const signingKeyContext = (id: string) => `signing_keys.private_jwk id=${id}`;
