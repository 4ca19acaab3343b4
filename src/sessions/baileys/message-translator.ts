import {
  getContentType,
  getUrlFromDirectPath,
  normalizeMessageContent,
  type proto,
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
}

type Media = NonNullable<NetworkMessage['media']>;
type Body = Pick<NetworkMessage, 'type' | 'text' | 'reply_to' | 'media' | 'reaction' | 'buttons'>;
type ButtonItem = { id: string; text: string };

/**
 * One Baileys message as our NetworkMessage, or undefined when it is not a user-visible message:
 * stubs without content (group notices, which arrive as their own events; undecryptable
 * placeholders, which Baileys re-delivers once decrypted) and protocol messages (revokes, history
 * sync notifications, key shares).
 */
export function translateMessage(msg: WAMessage, ctx: TranslateContext): NetworkMessage | undefined {
  const key = msg.key;
  const chat = normalizeJid(key.remoteJid);
  if (!chat || !key.id) return undefined;
  const content = normalizeMessageContent(msg.message);
  const contentType = getContentType(content ?? undefined);
  if (!content || !contentType || contentType === 'protocolMessage') return undefined;

  const fromMe = key.fromMe === true;
  const sender = senderOf(key, msg.participant, chat, fromMe, ctx);
  return compact<NetworkMessage>({
    id: key.id,
    chat,
    sender: sender.jid,
    sender_pn: sender.pn,
    sender_lid: sender.lid,
    from_me: fromMe,
    is_group: isGroupJid(chat),
    push_name: msg.pushName ?? undefined,
    // Messages always carry a timestamp on the wire; 0 marks the impossible case instead of
    // inventing a time in a pure function.
    timestamp_s: toInt(msg.messageTimestamp) ?? 0,
    ...bodyOf(content),
  });
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
    const identity = identityOf(participant ?? me?.jid ?? chat, participant ? key.participantAlt : undefined);
    if (me) {
      const meJid = normalizeJid(me.jid);
      if (isPhoneJid(meJid)) identity.pn ??= meJid;
      const meLid = normalizeJid(me.lid);
      if (isLid(meLid)) identity.lid ??= meLid;
    }
    return identity;
  }
  if (participant) return identityOf(participant, key.participantAlt);
  return identityOf(chat, key.remoteJidAlt);
}

function bodyOf(content: proto.IMessage): Body {
  if (content.conversation) return { type: 'text', text: content.conversation };
  const ext = content.extendedTextMessage;
  if (ext) return compact<Body>({ type: 'text', text: ext.text ?? '', reply_to: replyTo(ext.contextInfo) });

  if (content.imageMessage) return mediaBody(content.imageMessage, imageMedia(content.imageMessage));
  if (content.videoMessage) return mediaBody(content.videoMessage, videoMedia(content.videoMessage));
  if (content.audioMessage) return mediaBody(content.audioMessage, audioMedia(content.audioMessage));
  if (content.documentMessage) return mediaBody(content.documentMessage, documentMedia(content.documentMessage));

  const reaction = content.reactionMessage;
  if (reaction) {
    // An empty text is how WhatsApp removes a reaction.
    return { type: 'reaction', reaction: { message_id: reaction.key?.id ?? '', text: reaction.text ?? '' } };
  }
  return buttonsBody(content) ?? { type: 'other' };
}

function replyTo(context: proto.IContextInfo | null | undefined): string | undefined {
  return context?.stanzaId || undefined;
}

/** Media we cannot describe for download (no key, no hash, no location) is kept as 'other'. */
function mediaBody(
  source: { contextInfo?: proto.IContextInfo | null; caption?: string | null },
  media: Media | undefined,
): Body {
  const reply_to = replyTo(source.contextInfo);
  if (!media) return compact<Body>({ type: 'other', text: source.caption || undefined, reply_to });
  return compact<Body>({ type: 'media', media, reply_to });
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

function audioMedia(m: proto.Message.IAudioMessage): Media | undefined {
  const base = commonMedia('audio', m, 'audio/ogg; codecs=opus');
  return base && compact({ ...base, seconds: m.seconds ?? undefined, ptt: m.ptt ?? undefined });
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
function buttonsBody(content: proto.IMessage): Body | undefined {
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
    return selected(response.selectedButtonId, response.selectedDisplayText, response.contextInfo);
  }
  const templateReply = content.templateButtonReplyMessage;
  if (templateReply) {
    return selected(templateReply.selectedId, templateReply.selectedDisplayText, templateReply.contextInfo);
  }
  return undefined;
}

function buttons(text: string | null | undefined, footer: string | null | undefined, items: ButtonItem[]): Body {
  return compact<Body>({
    type: 'buttons',
    text: text || undefined,
    buttons: compact({ footer: footer || undefined, items }),
  });
}

function selected(id: string | null | undefined, text: string | null | undefined, context: proto.IContextInfo | null | undefined): Body {
  return compact<Body>({
    type: 'buttons',
    text: text || undefined,
    reply_to: replyTo(context),
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
