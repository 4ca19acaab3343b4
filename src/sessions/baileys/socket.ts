import type { UserFacingSocketConfig, WASocket } from '@whiskeysockets/baileys';

/** The calls that run the account rather than its messages (account-operations.ts). */
export type AccountCalls =
  | 'groupCreate'
  | 'groupParticipantsUpdate'
  | 'groupUpdateSubject'
  | 'groupUpdateDescription'
  | 'groupSettingUpdate'
  | 'groupToggleEphemeral'
  | 'groupRevokeInvite'
  | 'groupGetInviteInfo'
  | 'groupAcceptInvite'
  | 'groupLeave'
  | 'updateProfilePicture'
  | 'removeProfilePicture'
  | 'updateProfileName'
  | 'updateProfileStatus'
  | 'updateBlockStatus'
  | 'fetchBlocklist'
  | 'fetchPrivacySettings'
  | 'updateLastSeenPrivacy'
  | 'updateOnlinePrivacy'
  | 'updateProfilePicturePrivacy'
  | 'updateStatusPrivacy'
  | 'updateGroupsAddPrivacy'
  | 'updateReadReceiptsPrivacy'
  | 'addChatLabel'
  | 'removeChatLabel';

/**
 * The part of Baileys' socket this driver uses, and nothing more. The connection depends on this
 * rather than on WASocket so its wiring (listeners, end before reconnect, caches) can be tested
 * with a fake socket, and so an upgrade of Baileys shows at once which calls we rely on.
 */
export type BaileysSocket = Pick<
  WASocket,
  | 'user'
  | 'end'
  | 'logout'
  | 'waitForSocketOpen'
  | 'requestPairingCode'
  | 'sendMessage'
  | 'readMessages'
  | 'chatModify'
  | 'rejectCall'
  | 'groupMetadata'
  | 'groupFetchAllParticipating'
  | 'groupInviteCode'
  | 'fetchStatus'
  | 'profilePictureUrl'
  | 'getBusinessProfile'
  | 'onWhatsApp'
  | 'presenceSubscribe'
  | 'sendPresenceUpdate'
  | 'updateMediaMessage'
  | AccountCalls
  | 'relayMessage'
  | 'waUploadToServer'
> & {
  /** Only the buffered-event API: we subscribe with `process` and release buffers on close. */
  ev: Pick<WASocket['ev'], 'process' | 'isBuffering' | 'flush'>;
  /** Only the creds are read (registration, platform, own ids); the keys are ours already. */
  authState: Pick<WASocket['authState'], 'creds'>;
  /** Baileys' phone number ↔ LID memory (in our key store), read to name people by phone jid. */
  signalRepository?: { lidMapping: Pick<WASocket['signalRepository']['lidMapping'], 'getPNForLID' | 'getLIDForPN' | 'getPNsForLIDs'> };
};

/** Makes one socket; Baileys' makeWASocket in production, a fake in the wiring tests. */
export type SocketFactory = (config: UserFacingSocketConfig) => BaileysSocket;
