/** Scopes of API-SPEC Authentication 5. `keys:admin` is internal and never minted. */
export const MINTABLE_SCOPES = [
  'assets:read',
  'assets:write',
  'locations:read',
  'locations:write',
  'tracking:read',
] as const;

export const INTERNAL_SCOPES = ['keys:admin'] as const;

export type Scope = (typeof MINTABLE_SCOPES)[number] | (typeof INTERNAL_SCOPES)[number];

export function isMintableScope(value: string): value is (typeof MINTABLE_SCOPES)[number] {
  return (MINTABLE_SCOPES as readonly string[]).includes(value);
}
