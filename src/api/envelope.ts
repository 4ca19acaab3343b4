/** The spec's envelope for instance endpoints that use one. */
export const envelope = <T>(data: T) => ({ code: 200, success: true as const, data });
