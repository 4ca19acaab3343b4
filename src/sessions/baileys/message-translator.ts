import {
  proto,
  getContentType,
  getUrlFromDirectPath,
  normalizeMessageContent,
  type WAMessage,
  type WAMessageKey,
} from '@whiskeysockets/baileys';
import type { NetworkMessage } from '../../domain/session/events.js';
import { compact } from './compact.js';
import { base64, identityOf, isGroupJid, isLid, isPhoneJid, normalizeJid, toInt, type Identity } from './jid.js';

/** What the translators need to know about the connection (the account itself). */
export interface TranslateContext {
  /** The connected account: sender of our own messages and of ReadSelf receipts. */
  me?: { jid: string; lid?: string };
  /** Synced history older than this (unix seconds) is not kept (HISTORY_SYNC_DAYS). */
  historySinceS?: number;
  /** The phone jid of a LID, when the network told this connection the pair before. */
  pnOf?: (lid: string) => string | undefined;
  /** Now (unix seconds), for what the network reports without a time (an error ack). */
  nowS?: number;
}

/** A person's jid as webhooks and the chat list key them: the phone jid whenever it is known. */
export function addressOf(jid: string, ctx: TranslateContext, alternate?: string | null): Identity & { address: string } {
  const identity = identityOf(jid, alternate);
  if (identity.lid && !identity.pn) {
    const pn = ctx.pnOf?.(identity.lid);
    if (pn) identity.pn = pn;
  }
  return { ...identity, address: identity.pn ?? identity.jid };
}

type Media = NonNullable<NetworkMessage['media']>;
type Body = Pick<
  NetworkMessage,
  'type' | 'text' | 'reply_to' | 'quoted' | 'media' | 'reaction' | 'buttons' | 'location' | 'contacts' | 'poll' | 'edit' | 'revoke' | 'album' | 'event' | 'group_invite' | 'poll_vote'
>;
type ButtonItem = { id: string; text: string };

/**
 * One Baileys message as our NetworkMessage, or undefined when it is not a user-visible message:
 * stubs without content (group notices, which arrive as their own events; undecryptable
 * placeholders, which Baileys re-delivers once decrypted) and protocol messages other than edits
 * and deletions for everyone (history sync notifications, key shares).
 *
 * A person is named by phone jid whenever the pair is known (CONTRACT.md, "Addresses"): from the
 * key's alternate jid (Baileys 7 sends it with LID-addressed messages) or from pairs learned earlier.
 */
export function translateMessage(msg: WAMessage, outer: TranslateContext): NetworkMessage | undefined {
  const key = msg.key;
  const ctx = withOwnPairs(outer, key);
  const rawChat = normalizeJid(key.remoteJid);
  if (!rawChat || !key.id) return undefined;
  const content = normalizeMessageContent(msg.message);
  const contentType = getContentType(content ?? undefined);
  if (!content || !contentType) return undefined;
  const body = bodyOf(content, ctx);
  if (!body) return undefined;

  const isGroup = isGroupJid(rawChat);
  const peer = isGroup ? undefined : addressOf(rawChat, ctx, key.remoteJidAlt);
  const fromMe = key.fromMe === true;
  const sender = senderOf(key, msg.participant, rawChat, fromMe, ctx);
  // Always said (CONTRACT.md, "Addresses"): as the network gave it, else by the jid it came on.
  const mode = key.addressingMode === 'lid' || key.addressingMode === 'pn' ? key.addressingMode : isLid(key.participant || rawChat) ? 'lid' : 'pn';
  return compact<NetworkMessage>({
    id: key.id,
    chat: peer?.address ?? rawChat,
    chat_lid: peer?.lid,
    addressing_mode: mode,
    sender: sender.pn ?? sender.jid,
    sender_pn: sender.pn,
    sender_lid: sender.lid,
    from_me: fromMe,
    is_group: isGroup,
    push_name: msg.pushName ?? undefined,
    // Messages always carry a timestamp on the wire; 0 marks the impossible case instead of
    // inventing a time in a pure function.
    timestamp_s: toInt(msg.messageTimestamp) ?? 0,
    ...body,
    mentions: mentionsOf(content, ctx),
    ...marksOf(content, contentType),
  });
}

/** The forward and view-once marks, as the content carries them. */
function marksOf(content: proto.IMessage, type: keyof proto.IMessage): Pick<NetworkMessage, 'forwarded' | 'view_once'> {
  const inner = content[type] as { contextInfo?: proto.IContextInfo | null; viewOnce?: boolean | null } | null | undefined;
  const context = typeof inner === 'object' && inner !== null ? inner.contextInfo : undefined;
  return compact({
    forwarded: context?.isForwarded ? true : undefined,
    view_once: inner && typeof inner === 'object' && inner.viewOnce ? true : undefined,
  });
}

/** The people a message mentions (`contextInfo.mentionedJid`), named by phone jid when known. */
function mentionsOf(content: proto.IMessage, ctx: TranslateContext): string[] | undefined {
  const type = getContentType(content);
  const inner = type ? (content[type] as { contextInfo?: proto.IContextInfo | null } | null | undefined) : undefined;
  const jids = inner && typeof inner === 'object' ? (inner.contextInfo?.mentionedJid ?? []) : [];
  const mentions = [...new Set(jids.map((jid) => normalizeJid(jid)).filter((jid): jid is string => !!jid).map((jid) => addressOf(jid, ctx).address))];
  return mentions.length ? mentions : undefined;
}

/**
 * Who sent it. Groups and broadcasts name the author in `participant` (v7 adds the other identity
 * in `participantAlt`); 1:1 chats are addressed by the peer's jid (`remoteJidAlt` holds the other
 * identity). Our own messages are from the connected account.
 */
function senderOf(
  key: WAMessageKey,
  infoParticipant: string | null | undefined,
  chat: string,
  fromMe: boolean,
  ctx: TranslateContext,
): Identity {
  const participant = key.participant || infoParticipant || undefined;
  if (fromMe) {
    const me = ctx.me;
    const identity: Identity = addressOf(participant ?? me?.jid ?? chat, ctx, participant ? key.participantAlt : undefined);
    if (me) {
      const meJid = normalizeJid(me.jid);
      if (isPhoneJid(meJid)) identity.pn ??= meJid;
      const meLid = normalizeJid(me.lid);
      if (isLid(meLid)) identity.lid ??= meLid;
    }
    return identity;
  }
  if (participant) return addressOf(participant, ctx, key.participantAlt);
  return addressOf(chat, ctx, key.remoteJidAlt);
}

/** The message's own key tells a pair (LID and alternate): it serves the keys inside it too. */
function withOwnPairs(ctx: TranslateContext, key: WAMessageKey): TranslateContext {
  const own = new Map<string, string>();
  for (const [a, b] of [
    [key.remoteJid, key.remoteJidAlt],
    [key.participant, key.participantAlt],
  ] as const) {
    const identity = a && b ? identityOf(a, b) : undefined;
    if (identity?.lid && identity.pn) own.set(identity.lid, identity.pn);
  }
  if (own.size === 0) return ctx;
  return { ...ctx, pnOf: (lid) => own.get(lid) ?? ctx.pnOf?.(lid) };
}

/** What the message says; undefined for protocol messages that are not edits or deletions. */
function bodyOf(content: proto.IMessage, ctx: TranslateContext): Body | undefined {
  if (content.protocolMessage) return protocolBody(content.protocolMessage, ctx);
  if (content.conversation) return { type: 'text', text: content.conversation };
  const ext = content.extendedTextMessage;
  if (ext) return compact<Body>({ type: 'text', text: ext.text ?? '', ...quoteOf(ext.contextInfo, ctx) });

  if (content.imageMessage) return mediaBody(content.imageMessage, imageMedia(content.imageMessage), ctx);
  if (content.videoMessage) return mediaBody(content.videoMessage, videoMedia(content.videoMessage), ctx);
  // A video note: a video played round and in place.
  if (content.ptvMessage) return mediaBody(content.ptvMessage, ptvMedia(content.ptvMessage), ctx);
  if (content.audioMessage) return mediaBody(content.audioMessage, audioMedia(content.audioMessage), ctx);
  if (content.documentMessage) return mediaBody(content.documentMessage, documentMedia(content.documentMessage), ctx);
  if (content.stickerMessage) return mediaBody(content.stickerMessage, stickerMedia(content.stickerMessage), ctx);

  const reaction = content.reactionMessage;
  if (reaction) {
    // An empty text is how WhatsApp removes a reaction. In a group the reacted message's author
    // is in the key's participant: without it a client cannot tell which message of that id.
    const author = reaction.key?.participant ? addressOf(reaction.key.participant, ctx).address : undefined;
    return {
      type: 'reaction',
      reaction: compact({ message_id: reaction.key?.id ?? '', text: reaction.text ?? '', from_me: reaction.key?.fromMe ?? undefined, participant: author }),
    };
  }
  return otherKinds(content, ctx) ?? buttonsBody(content, ctx) ?? { type: 'other' };
}

const ProtocolType = proto.Message.ProtocolMessage.Type;

/**
 * Edits and deletions for everyone travel as protocol messages naming the changed message by key
 * (an edit wrapped in `editedMessage`, which normalizeMessageContent unwraps). Other protocol
 * messages (history sync notifications, key shares, ephemeral settings) are not messages.
 */
function protocolBody(p: proto.Message.IProtocolMessage, ctx: TranslateContext): Body | undefined {
  const id = p.key?.id;
  if (!id) return undefined;
  if (p.type === ProtocolType.REVOKE) {
    const participant = p.key?.participant ? addressOf(p.key.participant, ctx).address : undefined;
    return { type: 'revoke', revoke: compact({ message_id: id, from_me: p.key?.fromMe ?? undefined, participant }) };
  }
  if (p.type === ProtocolType.MESSAGE_EDIT) {
    const edited = normalizeMessageContent(p.editedMessage);
    return { type: 'edit', edit: { message_id: id }, text: textOf(edited) ?? '' };
  }
  return undefined;
}

/** The text a message shows: its text, or a media caption. */
function textOf(m: proto.IMessage | null | undefined): string | undefined {
  if (!m) return undefined;
  return (
    m.conversation ||
    m.extendedTextMessage?.text ||
    m.imageMessage?.caption ||
    m.videoMessage?.caption ||
    m.documentMessage?.caption ||
    undefined
  );
}

function otherKinds(content: proto.IMessage, ctx: TranslateContext): Body | undefined {
  const loc = content.locationMessage ?? content.liveLocationMessage;
  if (loc) {
    const name = 'name' in loc ? loc.name : undefined;
    const address = 'address' in loc ? loc.address : undefined;
    return compact<Body>({
      type: 'location',
      location: compact({ latitude: loc.degreesLatitude ?? 0, longitude: loc.degreesLongitude ?? 0, name: name || undefined, address: address || undefined }),
      ...quoteOf(loc.contextInfo, ctx),
    });
  }
  const card = content.contactMessage;
  if (card) return compact<Body>({ type: 'contact', contacts: [{ display_name: card.displayName ?? '', vcard: card.vcard ?? '' }], ...quoteOf(card.contextInfo, ctx) });
  const cards = content.contactsArrayMessage;
  if (cards) {
    return compact<Body>({
      type: 'contact',
      contacts: (cards.contacts ?? []).map((c) => ({ display_name: c.displayName ?? '', vcard: c.vcard ?? '' })),
      ...quoteOf(cards.contextInfo, ctx),
    });
  }
  const album = content.albumMessage;
  if (album) {
    // The album's images and videos arrive as messages of their own; this says how many to expect.
    return compact<Body>({ type: 'other', album: { images: Math.max(0, album.expectedImageCount ?? 0), videos: Math.max(0, album.expectedVideoCount ?? 0) }, ...quoteOf(album.contextInfo, ctx) });
  }
  const event = content.eventMessage;
  if (event) {
    const place = event.location;
    return compact<Body>({
      type: 'other',
      event: compact({
        name: event.name ?? '',
        description: event.description || undefined,
        start_s: toInt(event.startTime) || undefined,
        end_s: toInt(event.endTime) || undefined,
        location: place
          ? compact({ latitude: place.degreesLatitude ?? 0, longitude: place.degreesLongitude ?? 0, name: place.name || undefined, address: place.address || undefined })
          : undefined,
        join_link: event.joinLink || undefined,
        canceled: event.isCanceled || undefined,
      }),
      ...quoteOf(event.contextInfo, ctx),
    });
  }
  const invite = content.groupInviteMessage;
  if (invite?.groupJid && invite.inviteCode) {
    return compact<Body>({
      type: 'other',
      text: invite.caption || undefined,
      group_invite: compact({
        group: normalizeJid(invite.groupJid) ?? invite.groupJid,
        code: invite.inviteCode,
        expires_s: toInt(invite.inviteExpiration) || undefined,
        group_name: invite.groupName || undefined,
        caption: invite.caption || undefined,
      }),
      ...quoteOf(invite.contextInfo, ctx),
    });
  }
  const poll = content.pollCreationMessage ?? content.pollCreationMessageV2 ?? content.pollCreationMessageV3;
  if (poll) {
    // The secret the votes are encrypted with travels beside the poll; the gateway opens votes with it.
    const secret = base64(content.messageContextInfo?.messageSecret);
    return compact<Body>({
      type: 'poll',
      poll: compact({ name: poll.name ?? '', options: (poll.options ?? []).map((o) => o.optionName ?? ''), selectable_count: Math.max(0, poll.selectableOptionsCount ?? 0), message_secret: secret }),
      ...quoteOf(poll.contextInfo, ctx),
    });
  }
  const update = content.pollUpdateMessage;
  if (update?.pollCreationMessageKey?.id) {
    // Encrypted with the poll's secret; opened before it is stored (src/sessions/poll-votes.ts).
    const key = update.pollCreationMessageKey;
    const creator = key.fromMe ? normalizeJid(ctx.me?.jid) : normalizeJid(key.participant || key.remoteJid);
    return {
      type: 'poll_vote',
      poll_vote: compact({ poll_message_id: key.id ?? '', creator_jid: creator, enc_payload: base64(update.vote?.encPayload), enc_iv: base64(update.vote?.encIv) }),
    };
  }
  return undefined;
}

/**
 * A reply names the quoted message by id and carries its author (`participant`) and a copy of its
 * content: both go to the webhook, so an integrator can show the quote without a message store.
 */
function quoteOf(context: proto.IContextInfo | null | undefined, ctx: TranslateContext): Pick<Body, 'reply_to' | 'quoted'> {
  const reply_to = context?.stanzaId || undefined;
  if (!reply_to) return {};
  const sender = context?.participant ? addressOf(context.participant, ctx).address : undefined;
  const text = textOf(normalizeMessageContent(context?.quotedMessage));
  const quoted = compact({ sender, text });
  return Object.keys(quoted).length ? { reply_to, quoted } : { reply_to };
}

/** Media we cannot describe for download (no key, no hash, no location) is kept as 'other'. */
function mediaBody(
  source: { contextInfo?: proto.IContextInfo | null; caption?: string | null },
  media: Media | undefined,
  ctx: TranslateContext,
): Body {
  const quote = quoteOf(source.contextInfo, ctx);
  if (!media) return compact<Body>({ type: 'other', text: source.caption || undefined, ...quote });
  return compact<Body>({ type: 'media', media, ...quote });
}

type CommonMedia = {
  url?: string | null;
  directPath?: string | null;
  mediaKey?: Uint8Array | null;
  fileEncSha256?: Uint8Array | null;
  fileSha256?: Uint8Array | null;
  fileLength?: Parameters<typeof toInt>[0];
  mimetype?: string | null;
};

function commonMedia(kind: Media['kind'], m: CommonMedia, defaultMime: string): Media | undefined {
  const media_key = base64(m.mediaKey);
  const file_sha256 = base64(m.fileSha256);
  const direct_path = m.directPath || undefined;
  // Baileys downloads from the direct path on the default media host when the URL is absent.
  const url = m.url || (direct_path ? getUrlFromDirectPath(direct_path) : undefined);
  if (!media_key || !file_sha256 || !url) return undefined;
  return {
    kind,
    url,
    direct_path,
    media_key,
    file_enc_sha256: base64(m.fileEncSha256),
    file_sha256,
    file_length: Math.max(0, toInt(m.fileLength) ?? 0),
    mimetype: m.mimetype || defaultMime,
  };
}

function imageMedia(m: proto.Message.IImageMessage): Media | undefined {
  const base = commonMedia('image', m, 'image/jpeg');
  return base && compact({ ...base, caption: m.caption || undefined, width: m.width ?? undefined, height: m.height ?? undefined });
}

function videoMedia(m: proto.Message.IVideoMessage): Media | undefined {
  const base = commonMedia('video', m, 'video/mp4');
  return (
    base &&
    compact({
      ...base,
      caption: m.caption || undefined,
      seconds: m.seconds ?? undefined,
      width: m.width ?? undefined,
      height: m.height ?? undefined,
    })
  );
}

function ptvMedia(m: proto.Message.IVideoMessage): Media | undefined {
  const base = videoMedia(m);
  return base && { ...base, ptv: true };
}

function audioMedia(m: proto.Message.IAudioMessage): Media | undefined {
  const base = commonMedia('audio', m, 'audio/ogg; codecs=opus');
  return base && compact({ ...base, seconds: m.seconds ?? undefined, ptt: m.ptt ?? undefined });
}

function stickerMedia(m: proto.Message.IStickerMessage): Media | undefined {
  const base = commonMedia('sticker', m, 'image/webp');
  return base && compact({ ...base, width: m.width ?? undefined, height: m.height ?? undefined });
}

function documentMedia(m: proto.Message.IDocumentMessage): Media | undefined {
  const base = commonMedia('document', m, 'application/octet-stream');
  return base && compact({ ...base, caption: m.caption || undefined, file_name: m.fileName || m.title || undefined });
}

/**
 * Interactive messages. Cards (buttons, templates, native-flow) list their buttons; a tap on a
 * button arrives as a response message, which we carry as a 'buttons' message holding only the
 * chosen button, its label as text, and `reply_to` pointing at the card.
 */
function buttonsBody(content: proto.IMessage, ctx: TranslateContext): Body | undefined {
  const card = content.buttonsMessage;
  if (card) {
    const items = (card.buttons ?? []).map((b) => ({ id: b.buttonId ?? '', text: b.buttonText?.displayText ?? '' }));
    return buttons(card.contentText || card.text, card.footerText, items);
  }
  const template = content.templateMessage?.hydratedTemplate ?? content.templateMessage?.hydratedFourRowTemplate;
  if (template) {
    const items: ButtonItem[] = [];
    for (const b of template.hydratedButtons ?? []) {
      if (b.quickReplyButton) items.push({ id: b.quickReplyButton.id ?? '', text: b.quickReplyButton.displayText ?? '' });
      else if (b.urlButton) items.push({ id: b.urlButton.url ?? '', text: b.urlButton.displayText ?? '' });
      else if (b.callButton) items.push({ id: b.callButton.phoneNumber ?? '', text: b.callButton.displayText ?? '' });
    }
    return buttons(template.hydratedContentText, template.hydratedFooterText, items);
  }
  const interactive = content.interactiveMessage;
  if (interactive?.nativeFlowMessage) {
    const items = (interactive.nativeFlowMessage.buttons ?? []).flatMap(nativeFlowItem);
    return buttons(interactive.body?.text, interactive.footer?.text, items);
  }
  const response = content.buttonsResponseMessage;
  if (response) {
    return selected(response.selectedButtonId, response.selectedDisplayText, response.contextInfo, ctx);
  }
  const templateReply = content.templateButtonReplyMessage;
  if (templateReply) {
    return selected(templateReply.selectedId, templateReply.selectedDisplayText, templateReply.contextInfo, ctx);
  }
  // A row chosen from a list: its id, and its title as the text, like a tapped button.
  const listReply = content.listResponseMessage;
  if (listReply) {
    return selected(listReply.singleSelectReply?.selectedRowId, listReply.title, listReply.contextInfo, ctx);
  }
  // A tap on a native-flow button (an interactive card): its id in the reply's JSON, its label as the body.
  const interactiveReply = content.interactiveResponseMessage;
  if (interactiveReply) {
    const flow = interactiveReply.nativeFlowResponseMessage;
    return selected(flowReplyId(flow?.paramsJson) ?? flow?.name, interactiveReply.body?.text, interactiveReply.contextInfo, ctx);
  }
  return undefined;
}

/** The id a native-flow reply carries in its parameters (`{"id": ...}`), when it is JSON with one. */
function flowReplyId(paramsJson: string | null | undefined): string | undefined {
  if (!paramsJson) return undefined;
  try {
    const params: unknown = JSON.parse(paramsJson);
    if (typeof params !== 'object' || params === null) return undefined;
    const id = (params as Record<string, unknown>).id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

function buttons(text: string | null | undefined, footer: string | null | undefined, items: ButtonItem[]): Body {
  return compact<Body>({
    type: 'buttons',
    text: text || undefined,
    buttons: compact({ footer: footer || undefined, items }),
  });
}

function selected(id: string | null | undefined, text: string | null | undefined, context: proto.IContextInfo | null | undefined, ctx: TranslateContext): Body {
  return compact<Body>({
    type: 'buttons',
    text: text || undefined,
    reply_to: quoteOf(context, ctx).reply_to,
    buttons: { items: [{ id: id ?? '', text: text ?? '' }] },
  });
}

/** Native-flow buttons carry their label and id (or URL) in a JSON string. */
function nativeFlowItem(button: proto.Message.InteractiveMessage.NativeFlowMessage.INativeFlowButton): ButtonItem[] {
  if (!button.buttonParamsJson) return [];
  try {
    const params: unknown = JSON.parse(button.buttonParamsJson);
    if (typeof params !== 'object' || params === null) return [];
    const { display_text, id, url, phone_number } = params as Record<string, unknown>;
    const text = typeof display_text === 'string' ? display_text : '';
    const itemId = [id, url, phone_number].find((v): v is string => typeof v === 'string') ?? button.name ?? '';
    return [{ id: itemId, text }];
  } catch {
    return [];
  }
}
