import type { Document, WriteOp } from '../../infra/docstore/port.js';

export const SEND_LANES = 'send_lanes';

/**
 * One chat's queued sends, as the send queue runs them: each chat is a lane, run in order, and a
 * failing head holds its own chat only (issue 27, finding 11). The document names the lane's head
 * so the worker reads one document per lane instead of scanning the pending sends (a backlog of
 * thousands in one chat hid the heads of every other). The projection only creates a lane and
 * raises `last_pos`; the worker moves the head on and removes a lane it emptied, guarded on
 * `last_pos` so a send queued meanwhile is never left without its lane.
 */
export type SendLaneDoc = Document & {
  /** `<instance>:<chat>`. */
  _id: string;
  instance_id: string;
  chat: string;
  /** The send the lane runs next: its id, its place in the log, when it may go. */
  head_id: string;
  head_pos: number;
  due_ms: number;
  /** The latest send queued in the lane (the guard of the worker's writes). */
  last_pos: number;
};

export const laneId = (instanceId: string, chat: string) => `${instanceId}:${chat}`;

/** The lane write of a SendQueued: created with this send as its head, or told a later one exists. */
export function laneOnQueued(instanceId: string, chat: string, messageId: string, pos: number): WriteOp {
  return {
    collection: SEND_LANES,
    op: 'updateOne',
    filter: { _id: laneId(instanceId, chat) },
    update: { $setOnInsert: { instance_id: instanceId, chat, head_id: messageId, head_pos: pos, due_ms: 0 }, $max: { last_pos: pos } },
    upsert: true,
  };
}
