import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

/**
 * WhatsApp's poll vote encryption. A poll carries a 32-byte secret; each vote is the list of the
 * chosen options' SHA-256 (a PollVoteMessage) under AES-256-GCM, with a key bound to the poll's
 * id, its creator and the voter:
 *   key0 = HMAC-SHA256(key = 32 zero bytes, secret)
 *   key  = HMAC-SHA256(key = key0, pollId | creatorJid | voterJid | "Poll Vote" | 0x01)
 *   aad  = pollId | 0x00 | voterJid
 * The payload is ciphertext followed by the 16-byte tag. Baileys 7 stopped decrypting votes
 * itself; the gateway does it with the secret kept in the poll's stored creation event.
 */
export interface PollVoteBinding {
  pollMessageId: string;
  creatorJid: string;
  voterJid: string;
}

const TAG_LENGTH = 16;

function voteKey(secret: Uint8Array, b: PollVoteBinding): Buffer {
  const key0 = createHmac('sha256', Buffer.alloc(32)).update(secret).digest();
  const info = Buffer.concat([Buffer.from(b.pollMessageId), Buffer.from(b.creatorJid), Buffer.from(b.voterJid), Buffer.from('Poll Vote'), Buffer.from([1])]);
  return createHmac('sha256', key0).update(info).digest();
}

const aadOf = (b: PollVoteBinding) => Buffer.from(`${b.pollMessageId}\u0000${b.voterJid}`);

export const optionHash = (name: string): Buffer => createHash('sha256').update(name).digest();

/** PollVoteMessage { repeated bytes selectedOptions = 1; }, written by hand: one field. */
function encodeVote(hashes: Buffer[]): Buffer {
  return Buffer.concat(hashes.flatMap((h) => [Buffer.from([0x0a, h.length]), h]));
}

function decodeVote(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  while (at < bytes.length) {
    const tag = bytes[at++] as number;
    // Varint length (option hashes are 32 bytes, but read it properly).
    let length = 0;
    let shift = 0;
    for (;;) {
      const b = bytes[at++];
      if (b === undefined) throw new Error('truncated poll vote');
      length |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) break;
      shift += 7;
    }
    if (tag !== 0x0a) {
      // Unknown length-delimited fields are skipped; any other wire type is not a vote.
      if ((tag & 0x07) !== 2) throw new Error('not a poll vote');
      at += length;
      continue;
    }
    if (at + length > bytes.length) throw new Error('truncated poll vote');
    out.push(bytes.subarray(at, at + length));
    at += length;
  }
  return out;
}

export function encryptPollVote(secret: Uint8Array, binding: PollVoteBinding, options: string[]): { encPayload: Buffer; encIv: Buffer } {
  const encIv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', voteKey(secret, binding), encIv);
  cipher.setAAD(aadOf(binding));
  const body = Buffer.concat([cipher.update(encodeVote(options.map(optionHash))), cipher.final()]);
  return { encPayload: Buffer.concat([body, cipher.getAuthTag()]), encIv };
}

/** The chosen options' hashes; throws when the vote does not open with this secret and binding. */
export function decryptPollVote(secret: Uint8Array, binding: PollVoteBinding, encPayload: Uint8Array, encIv: Uint8Array): Buffer[] {
  const payload = Buffer.from(encPayload);
  if (payload.length < TAG_LENGTH) throw new Error('poll vote too short');
  const decipher = createDecipheriv('aes-256-gcm', voteKey(secret, binding), Buffer.from(encIv));
  decipher.setAAD(aadOf(binding));
  decipher.setAuthTag(payload.subarray(payload.length - TAG_LENGTH));
  const plain = Buffer.concat([decipher.update(payload.subarray(0, payload.length - TAG_LENGTH)), decipher.final()]);
  return decodeVote(plain);
}
