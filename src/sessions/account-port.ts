import type { PrivacySetting } from '../domain/session/account-events.js';
import type { SessionEventData } from '../domain/session/events.js';
import type { ProfileSnapshot } from './port.js';

export type GroupInfo = SessionEventData<'GroupsUpserted'>['groups'][number];
export type GroupParticipant = GroupInfo['participants'][number];

export type ParticipantAction = 'add' | 'remove' | 'promote' | 'demote';

/**
 * The network's answer for one person of a participant change: 200 done, 403 not allowed (their
 * privacy, or the owner), 408 not on the network or not (any more) a member, 409 already there.
 */
export interface ParticipantResult {
  /** The phone as asked. */
  phone: string;
  /** The jid the network used for the person. */
  jid: string;
  status: number;
  /** The person as the group now shows them (done changes only). */
  participant?: GroupParticipant;
}

/** One change of a group's settings; the network takes them one at a time. */
export type GroupChange =
  | { name: string }
  | { topic: string }
  | { is_announce: boolean }
  | { is_locked: boolean }
  | { disappearing_timer: number };

export interface PictureRef {
  id: string;
  url?: string;
}

export type PrivacyValues = Partial<Record<PrivacySetting, string>>;

export interface NetworkLabel {
  id: string;
  name: string;
  color: number;
}

/** A status post: text on a colored background, or an image or a video with a caption. */
export interface StatusContent {
  text?: string;
  media?: { kind: 'image' | 'video'; mimetype: string; bytes: Buffer; caption?: string };
  /** `#RRGGBB` (text posts). */
  background_color?: string;
  /** The network's font index (text posts). */
  font?: number;
  /** Who sees it: jids, resolved by the caller; the account's contacts when absent. */
  recipients?: string[];
}

export interface ContactProfile extends Pick<ProfileSnapshot, 'jid' | 'phone' | 'about' | 'picture_url' | 'business'> {
  lid?: string;
  push_name?: string;
  business_name?: string;
}

/**
 * Running the account rather than its messages: groups, profile, block list, privacy, labels and
 * status posts, as the phone itself would do them. Failures are the network's: a DomainError
 * (`not_found` for a group the account is not in, `forbidden` for an admin-only change by a
 * non-admin, `invalid_input` for what the network refuses as such) or anything else (upstream).
 * Pictures reach the driver as a JPEG the gateway has checked and sized already.
 */
export interface AccountOperations {
  groupCreate(name: string, participants: string[]): Promise<GroupInfo>;
  /** The group as the network holds it now. */
  groupMetadata(group: string): Promise<GroupInfo>;
  /** Per person, never all-or-nothing: the network answers each one. Phones or jids. */
  groupParticipants(group: string, action: ParticipantAction, people: string[]): Promise<ParticipantResult[]>;
  groupUpdate(group: string, change: GroupChange): Promise<void>;
  /** Resets the invite link and answers the new code. */
  groupRevokeInvite(group: string): Promise<string>;
  /** The group an invite code leads to, without joining. */
  groupInviteInfo(code: string): Promise<GroupInfo>;
  /** Joins by invite code; answers the group's jid. */
  groupAcceptInvite(code: string): Promise<string>;
  groupLeave(group: string): Promise<void>;
  /** Sets a group's picture (JPEG); answers its id (and where it is served, when known). */
  groupPicture(group: string, jpeg: Buffer): Promise<PictureRef>;
  updateProfileName(name: string): Promise<void>;
  updateProfileStatus(about: string): Promise<void>;
  /** Sets the account's picture (JPEG); answers its id (and where it is served, when known). */
  updateProfilePicture(jpeg: Buffer): Promise<PictureRef>;
  removeProfilePicture(): Promise<void>;
  /** Another account's public profile, as the network shows it to this one. */
  contactProfile(jid: string): Promise<ContactProfile>;
  updateBlockStatus(jid: string, blocked: boolean): Promise<void>;
  fetchBlocklist(): Promise<string[]>;
  fetchPrivacy(): Promise<PrivacyValues>;
  updatePrivacy(setting: PrivacySetting, value: string): Promise<void>;
  /** Adds or removes a label on a chat (business accounts). */
  labelChat(chat: string, labelId: string, labeled: boolean): Promise<void>;
  /** Posts a status to `status@broadcast`; answers the message id and who it went to. */
  postStatus(content: StatusContent): Promise<{ message_id: string; recipients: string[]; timestamp_s: number }>;
}
