import type { NetworkMessage, SessionEvent } from '../domain/session/events.js';
import { decryptPollVote, optionHash } from '../infra/crypto/poll-vote.js';

type Find = (messageId: string) => Promise<NetworkMessage | undefined>;

/**
 * Opens the poll votes among a session's events before they are stored, whichever driver reported
 * them: the vote is encrypted with the poll's secret, which the poll's stored creation event keeps
 * (Baileys 7 no longer decrypts votes). `selected_options` is then the chosen option names; a vote
 * that does not open (the poll is not in the log, or has no secret) keeps its encrypted form and
 * says why in `undecrypted`. Other events pass unchanged, in order.
 */
export async function openPollVotes(events: SessionEvent[], find: Find, self: string[]): Promise<SessionEvent[]> {
  if (!events.some(hasVote)) return events;
  const out: SessionEvent[] = [];
  for (const event of events) {
    if ((event.type === 'MessageReceived' || event.type === 'MessageSent') && event.data.message.poll_vote) {
      out.push({ ...event, data: { ...event.data, message: await opened(event.data.message, find, self) } } as SessionEvent);
    } else out.push(event);
  }
  return out;
}

function hasVote(e: SessionEvent): boolean {
  return (e.type === 'MessageReceived' || e.type === 'MessageSent') && e.data.message.poll_vote?.enc_payload !== undefined && e.data.message.poll_vote.selected_options === undefined;
}

async function opened(m: NetworkMessage, find: Find, self: string[]): Promise<NetworkMessage> {
  const vote = m.poll_vote;
  if (!vote?.enc_payload || !vote.enc_iv || vote.selected_options) return m;
  const poll = await find(vote.poll_message_id).catch(() => undefined);
  if (!poll?.poll) return { ...m, poll_vote: { ...vote, undecrypted: 'the poll is not in the log' } };
  if (!poll.poll.message_secret) return { ...m, poll_vote: { ...vote, undecrypted: "the poll's secret is unknown" } };
  const secret = Buffer.from(poll.poll.message_secret, 'base64');
  // The network binds the vote to the identities it used; a LID or a phone jid may stand for either.
  const creators = unique([vote.creator_jid, ...(poll.from_me ? self : [poll.sender, poll.sender_pn, poll.sender_lid])]);
  const voters = unique([vote.voter_jid, m.sender, m.sender_pn, m.sender_lid]);
  for (const creatorJid of creators) {
    for (const voterJid of voters) {
      try {
        const hashes = decryptPollVote(secret, { pollMessageId: vote.poll_message_id, creatorJid, voterJid }, Buffer.from(vote.enc_payload, 'base64'), Buffer.from(vote.enc_iv, 'base64'));
        const byHash = new Map(poll.poll.options.map((name) => [optionHash(name).toString('hex'), name]));
        const names = hashes.map((h) => byHash.get(Buffer.from(h).toString('hex'))).filter((n): n is string => n !== undefined);
        const { undecrypted: _, ...rest } = vote;
        return { ...m, poll_vote: { ...rest, selected_options: names } };
      } catch {
        // Not this pair: the GCM tag fails for any other key.
      }
    }
  }
  return { ...m, poll_vote: { ...vote, undecrypted: 'the vote does not open with the poll secret' } };
}

function unique(values: (string | undefined)[]): string[] {
  return [...new Set(values.filter((v): v is string => !!v).map((v) => v.replace(/:\d+@/, '@')))];
}
