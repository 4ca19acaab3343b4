/**
 * The token of the instance just created, handed from the list to the instance page in memory
 * only (never in storage): it shows once, and a reload forgets it, as the API shows it once.
 */
let justCreated: { id: string; token: string } | null = null;

export function rememberCreated(id: string, token: string): void {
  justCreated = { id, token };
}

/** The token of `id` if it was just created; forgotten as it is taken. */
export function takeCreatedToken(id: string): string | null {
  const token = justCreated?.id === id ? justCreated.token : null;
  justCreated = null;
  return token;
}
