/**
 * The id a stream is named for: `session-<id>` and `instance-<id>` name an instance,
 * `account-<id>` an account. Categories have no dash, so the id is all after the first one.
 * (The names are built by each concept's `...Stream(id)`.)
 */
export function idOfStream(streamId: string): string {
  return streamId.slice(streamId.indexOf('-') + 1);
}
