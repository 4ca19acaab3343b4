import type { Static } from '@sinclair/typebox';
import type { Media, NetworkMessage } from '../../domain/session/events.js';
import type { MessageContent, MessageEvent } from './schemas.js';

type MediaData = Static<typeof Media>;
type ContextInfo = { stanzaID?: string; participant?: string; quotedMessage?: { conversation: string }; mentionedJID?: string[] };

/** Our stored message in the spec's shape: `Info` plus the network's message object. */
export function messageEvent(m: NetworkMessage): MessageEvent {
  const Info: MessageEvent['Info'] = {
    ID: m.id,
    Chat: m.chat,
    Sender: m.sender,
    IsFromMe: m.from_me,
    IsGroup: m.is_group,
    PushName: m.push_name ?? '',
    Timestamp: new Date(m.timestamp_s * 1000).toISOString(),
    Type: m.type,
    ...(m.media ? { MediaType: m.media.kind } : {}),
    // Always present (CONTRACT.md, "Addresses"); events stored before it was always recorded are read from their jids.
    AddressingMode: m.addressing_mode ?? (m.chat.endsWith('@lid') || m.sender.endsWith('@lid') ? 'lid' : 'pn'),
  };
  if (m.chat_lid) Info.ChatLID = m.chat_lid;
  if (m.sender_lid) Info.SenderLID = m.sender_lid;
  const event: MessageEvent = { Info, Message: content(m) };
  // Decrypted by the gateway, beside the network's encrypted vote (CONTRACT, "Sending every kind").
  if (m.poll_vote?.selected_options) event.PollVote = { poll_message_id: m.poll_vote.poll_message_id, selected_options: m.poll_vote.selected_options };
  return event;
}

function contextOf(m: NetworkMessage): ContextInfo | undefined {
  const mentions = m.mentions?.length ? { mentionedJID: m.mentions } : {};
  if (!m.reply_to) return m.mentions?.length ? mentions : undefined;
  return {
    stanzaID: m.reply_to,
    ...(m.quoted?.sender ? { participant: m.quoted.sender } : {}),
    ...(m.quoted?.text !== undefined ? { quotedMessage: { conversation: m.quoted.text } } : {}),
    ...mentions,
  };
}

function content(m: NetworkMessage): MessageContent {
  const contextInfo = contextOf(m);
  if (m.media) return mediaContent(m.media, contextInfo);
  if (m.reaction) {
    const r = m.reaction;
    const key = {
      ID: r.message_id,
      remoteJID: m.chat,
      ...(r.from_me !== undefined ? { fromMe: r.from_me } : {}),
      ...(r.participant !== undefined ? { participant: r.participant } : {}),
    };
    return { reactionMessage: { key, text: r.text } };
  }
  if (m.edit) {
    return { protocolMessage: { type: 'MESSAGE_EDIT', key: { ID: m.edit.message_id, remoteJID: m.chat }, editedMessage: { conversation: m.text ?? '' } } };
  }
  if (m.revoke) {
    const key = {
      ID: m.revoke.message_id,
      remoteJID: m.chat,
      ...(m.revoke.from_me !== undefined ? { fromMe: m.revoke.from_me } : {}),
      ...(m.revoke.participant !== undefined ? { participant: m.revoke.participant } : {}),
    };
    return { protocolMessage: { type: 'REVOKE', key } };
  }
  if (m.poll_vote) {
    const v = m.poll_vote;
    return {
      pollUpdateMessage: {
        pollCreationMessageKey: { ID: v.poll_message_id, remoteJID: m.chat },
        ...(v.enc_payload !== undefined && v.enc_iv !== undefined ? { vote: { encPayload: v.enc_payload, encIV: v.enc_iv } } : {}),
      },
    };
  }
  if (m.list) {
    const l = m.list;
    return {
      listMessage: {
        description: m.text ?? '',
        buttonText: l.button_text,
        ...(l.title !== undefined ? { title: l.title } : {}),
        ...(l.footer !== undefined ? { footerText: l.footer } : {}),
        sections: l.sections.map((s) => ({ title: s.title, rows: s.rows.map((r) => ({ rowID: r.id, title: r.title, ...(r.description !== undefined ? { description: r.description } : {}) })) })),
      },
    };
  }
  if (m.location) {
    const l = m.location;
    return {
      locationMessage: {
        degreesLatitude: l.latitude,
        degreesLongitude: l.longitude,
        ...(l.name !== undefined ? { name: l.name } : {}),
        ...(l.address !== undefined ? { address: l.address } : {}),
      },
    };
  }
  if (m.contacts) {
    const cards = m.contacts.map((c) => ({ displayName: c.display_name, vcard: c.vcard }));
    // The network sends one card as contactMessage and several as contactsArrayMessage.
    return cards.length === 1 && cards[0] ? { contactMessage: cards[0] } : { contactsArrayMessage: { contacts: cards } };
  }
  if (m.poll) {
    return { pollCreationMessage: { name: m.poll.name, options: m.poll.options.map((optionName) => ({ optionName })), selectableOptionsCount: m.poll.selectable_count } };
  }
  if (m.album) {
    return { albumMessage: { expectedImageCount: m.album.images, expectedVideoCount: m.album.videos, ...(contextInfo ? { contextInfo } : {}) } };
  }
  if (m.event) {
    const e = m.event;
    return {
      eventMessage: {
        name: e.name,
        ...(e.description !== undefined ? { description: e.description } : {}),
        ...(e.start_s !== undefined ? { startTime: new Date(e.start_s * 1000).toISOString() } : {}),
        ...(e.end_s !== undefined ? { endTime: new Date(e.end_s * 1000).toISOString() } : {}),
        ...(e.location
          ? {
              location: {
                degreesLatitude: e.location.latitude,
                degreesLongitude: e.location.longitude,
                ...(e.location.name !== undefined ? { name: e.location.name } : {}),
                ...(e.location.address !== undefined ? { address: e.location.address } : {}),
              },
            }
          : {}),
        ...(e.join_link !== undefined ? { joinLink: e.join_link } : {}),
        isCanceled: e.canceled === true,
        ...(contextInfo ? { contextInfo } : {}),
      },
    };
  }
  if (m.group_invite) {
    const g = m.group_invite;
    return {
      groupInviteMessage: {
        groupJID: g.group,
        inviteCode: g.code,
        ...(g.expires_s !== undefined ? { inviteExpiration: new Date(g.expires_s * 1000).toISOString() } : {}),
        ...(g.group_name !== undefined ? { groupName: g.group_name } : {}),
        ...(g.caption !== undefined ? { caption: g.caption } : {}),
        ...(contextInfo ? { contextInfo } : {}),
      },
    };
  }
  if (m.buttons) {
    return {
      buttonsMessage: {
        ...(m.text !== undefined ? { contentText: m.text } : {}),
        ...(m.buttons.footer !== undefined ? { footerText: m.buttons.footer } : {}),
        buttons: m.buttons.items.map((b) => ({ buttonID: b.id, buttonText: { displayText: b.text } })),
      },
    };
  }
  // The network sends a reply as an extended text; a plain text as `conversation`.
  if (contextInfo) return { extendedTextMessage: { text: m.text ?? '', contextInfo } };
  return m.text !== undefined ? { conversation: m.text } : {};
}

function mediaContent(media: MediaData, contextInfo: ContextInfo | undefined): MessageContent {
  const base = {
    URL: media.url,
    mediaKey: media.media_key,
    fileSHA256: media.file_sha256,
    fileLength: media.file_length,
    mimetype: media.mimetype,
    ...(media.direct_path !== undefined ? { directPath: media.direct_path } : {}),
    ...(media.file_enc_sha256 !== undefined ? { fileEncSha256: media.file_enc_sha256 } : {}),
    ...(contextInfo ? { contextInfo } : {}),
  };
  const caption = media.caption !== undefined ? { caption: media.caption } : {};
  const size = {
    ...(media.width !== undefined ? { width: media.width } : {}),
    ...(media.height !== undefined ? { height: media.height } : {}),
  };
  const seconds = media.seconds !== undefined ? { seconds: media.seconds } : {};
  switch (media.kind) {
    case 'image':
      return { imageMessage: { ...base, ...caption, ...size } };
    case 'video':
      // A video note travels as the network's ptvMessage: same fields, played round and in place.
      return media.ptv ? { ptvMessage: { ...base, ...caption, ...seconds, ...size } } : { videoMessage: { ...base, ...caption, ...seconds, ...size } };
    case 'audio':
      return { audioMessage: { ...base, ...seconds, ...(media.ptt !== undefined ? { PTT: media.ptt } : {}) } };
    case 'document':
      return { documentMessage: { ...base, ...caption, ...(media.file_name !== undefined ? { fileName: media.file_name } : {}) } };
    case 'sticker':
      return { stickerMessage: { ...base, ...size } };
  }
}
