import { Type, type Static } from '@sinclair/typebox';
import { join } from 'node:path';

/**
 * `npm run rebuild` and a running gateway talk over a Unix socket in the data directory: the
 * embedded stores are one process's (the data-dir lock), so the gateway that holds them does the
 * rebuild, and only who can open the data directory (its owner: the directory is 0700, the socket
 * 0600) can ask for one. No HTTP route: no tenant, token or network peer can reach it.
 *
 * One JSON object per line. The CLI sends a request; the gateway answers progress lines, then one
 * result or one error, and closes.
 */
export const controlSocketPath = (dataDir: string) => join(dataDir, 'control.sock');

/** Bounded: a line longer than this is no request of ours. */
export const MAX_REQUEST_BYTES = 4096;

export const RebuildRequest = Type.Object(
  { rebuild: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 32 }) },
  { additionalProperties: false },
);
export type RebuildRequest = Static<typeof RebuildRequest>;

const ChecksumSchema = Type.Object({ sha256: Type.String(), documents: Type.Integer({ minimum: 0 }) });

export const ControlAnswer = Type.Union([
  Type.Object({ progress: Type.Literal('start'), head: Type.String() }),
  Type.Object({ progress: Type.Literal('advance'), position: Type.String(), events: Type.Integer() }),
  Type.Object({ progress: Type.Literal('end'), events: Type.Integer(), seconds: Type.Number() }),
  Type.Object({
    results: Type.Array(Type.Object({ name: Type.String(), before: ChecksumSchema, after: ChecksumSchema })),
    stats: Type.Object({ events: Type.Integer(), seconds: Type.Number(), onThread: Type.Array(Type.String()) }),
  }),
  Type.Object({ error: Type.String(), unknown: Type.Optional(Type.Boolean()) }),
]);
export type ControlAnswer = Static<typeof ControlAnswer>;
