/** A command's failure as mongod reports it: `{ok: 0, errmsg, code, codeName}` (or a write error). */
export class CommandError extends Error {
  constructor(
    readonly code: number,
    readonly codeName: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export const notFound = (ns: string): CommandError => new CommandError(26, 'NamespaceNotFound', `ns not found: ${ns}`);

/**
 * The engine's own checks (shared with the embedded store) throw TypeErrors; mongod's answers for
 * the same refusals carry these codes.
 */
export function asCommandError(error: unknown): CommandError {
  if (error instanceof CommandError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (/immutable field '_id'/.test(message)) return new CommandError(66, 'ImmutableField', message);
  if (/partial index/.test(message)) return new CommandError(67, 'CannotCreateIndex', message);
  if (/conflict/.test(message)) return new CommandError(40, 'ConflictingUpdateOperators', message);
  return new CommandError(2, 'BadValue', message);
}
