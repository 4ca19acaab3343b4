import { deserialize, serialize, type Document as BsonDocument } from 'bson';

/*
 * MongoDB's wire protocol framing: every message is a 16-byte header (length, request id,
 * response-to, op code) and a body. The driver opens each connection with a legacy OP_QUERY
 * `isMaster` and sends everything else as OP_MSG, so those two (and their replies) are all a
 * test server needs. https://www.mongodb.com/docs/manual/reference/mongodb-wire-protocol/
 */

export const OP_REPLY = 1;
export const OP_QUERY = 2004;
export const OP_MSG = 2013;

const HEADER = 16;
const CHECKSUM_PRESENT = 1;
const MORE_TO_COME = 2;
/** Refuses a frame larger than a real server would take (48 MB), rather than buffering it. */
const MAX_MESSAGE = 48_000_000;

export type Command = Record<string, unknown>;

export interface Request {
  requestId: number;
  /** OP_QUERY (the handshake) is answered with OP_REPLY; OP_MSG with OP_MSG. */
  legacy: boolean;
  /** The client expects no answer (unacknowledged writes). */
  moreToCome: boolean;
  command: Command;
}

/** Values are decoded as the driver's users see them: Buffers for binaries, numbers for int64s. */
const DECODE = { promoteBuffers: true, promoteLongs: true, promoteValues: true } as const;

/** Cuts a TCP stream into whole messages. */
export class MessageReader {
  private buffered: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Buffer[] {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const messages: Buffer[] = [];
    while (this.buffered.length >= 4) {
      const length = this.buffered.readInt32LE(0);
      if (length < HEADER || length > MAX_MESSAGE) throw new Error(`invalid message length ${length}`);
      if (this.buffered.length < length) break;
      messages.push(this.buffered.subarray(0, length));
      this.buffered = this.buffered.subarray(length);
    }
    return messages;
  }
}

export function decodeRequest(message: Buffer): Request {
  const requestId = message.readInt32LE(4);
  const opCode = message.readInt32LE(12);
  if (opCode === OP_MSG) return decodeOpMsg(message, requestId);
  if (opCode === OP_QUERY) return decodeOpQuery(message, requestId);
  throw new Error(`unsupported op code ${opCode}`);
}

function decodeOpMsg(message: Buffer, requestId: number): Request {
  const flags = message.readUInt32LE(HEADER);
  const end = flags & CHECKSUM_PRESENT ? message.length - 4 : message.length;
  let offset = HEADER + 4;
  let command: Command | undefined;
  const sequences: Record<string, BsonDocument[]> = {};
  while (offset < end) {
    const kind = message.readUInt8(offset++);
    if (kind === 0) {
      const size = message.readInt32LE(offset);
      command = deserialize(message.subarray(offset, offset + size), DECODE);
      offset += size;
    } else if (kind === 1) {
      // A document sequence: the driver may send a command's array argument outside the body.
      const size = message.readInt32LE(offset);
      const sectionEnd = offset + size;
      let cursor = offset + 4;
      const nameEnd = message.indexOf(0, cursor);
      const name = message.toString('utf8', cursor, nameEnd);
      cursor = nameEnd + 1;
      const docs: BsonDocument[] = [];
      while (cursor < sectionEnd) {
        const docSize = message.readInt32LE(cursor);
        docs.push(deserialize(message.subarray(cursor, cursor + docSize), DECODE));
        cursor += docSize;
      }
      sequences[name] = docs;
      offset = sectionEnd;
    } else {
      throw new Error(`unsupported OP_MSG section kind ${kind}`);
    }
  }
  if (!command) throw new Error('OP_MSG without a body section');
  return { requestId, legacy: false, moreToCome: (flags & MORE_TO_COME) !== 0, command: { ...command, ...sequences } };
}

function decodeOpQuery(message: Buffer, requestId: number): Request {
  let offset = HEADER + 4; // flags
  offset = message.indexOf(0, offset) + 1; // full collection name, e.g. admin.$cmd
  offset += 8; // numberToSkip, numberToReturn
  const size = message.readInt32LE(offset);
  const query = deserialize(message.subarray(offset, offset + size), DECODE);
  // Commands may come wrapped as {$query: {...}, $readPreference: ...}.
  const command = (query.$query ?? query) as Command;
  return { requestId, legacy: true, moreToCome: false, command };
}

let nextResponseId = 1;

export function encodeReply(request: Request, reply: Command): Buffer {
  const body = serialize(reply);
  const responseId = nextResponseId++;
  if (request.legacy) {
    const header = Buffer.alloc(HEADER + 20);
    header.writeInt32LE(header.length + body.length, 0);
    header.writeInt32LE(responseId, 4);
    header.writeInt32LE(request.requestId, 8);
    header.writeInt32LE(OP_REPLY, 12);
    header.writeInt32LE(0, 16); // response flags
    header.writeBigInt64LE(0n, 20); // cursor id
    header.writeInt32LE(0, 28); // starting from
    header.writeInt32LE(1, 32); // number returned
    return Buffer.concat([header, body]);
  }
  const header = Buffer.alloc(HEADER + 5);
  header.writeInt32LE(header.length + body.length, 0);
  header.writeInt32LE(responseId, 4);
  header.writeInt32LE(request.requestId, 8);
  header.writeInt32LE(OP_MSG, 12);
  header.writeUInt32LE(0, 16); // flags
  header.writeUInt8(0, 20); // section kind 0: the body
  return Buffer.concat([header, body]);
}
