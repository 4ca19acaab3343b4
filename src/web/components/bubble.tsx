import { useEffect, useState } from 'preact/hooks';
import { messageOf } from '../api.js';
import { mediaOf, preview, type Message } from '../conversations.js';

const TICKS: Record<string, { mark: string; label: string }> = {
  scheduled: { mark: '🕓', label: 'scheduled' },
  queued: { mark: '🕓', label: 'queued' },
  sent: { mark: '✓', label: 'sent' },
  delivered: { mark: '✓✓', label: 'delivered' },
  read: { mark: '✓✓', label: 'read' },
  played: { mark: '✓✓', label: 'played' },
  canceled: { mark: '✕', label: 'canceled' },
};

const time = (iso: string) => new Date(iso).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });

/** Images and stickers, fetched by the message's id and shown in place. */
function Picture({ instanceId, message }: { instanceId: string; message: Message }) {
  const [src, setSrc] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let gone = false;
    mediaOf(instanceId, message).then(
      (data) => !gone && setSrc(data),
      (err) => !gone && setError(messageOf(err)),
    );
    return () => void (gone = true);
  }, [instanceId, message.message_id]);
  if (error) return <p class="muted">Image not available: {error}</p>;
  if (!src) return <p class="muted">Loading image…</p>;
  return <img class={message.kind === 'sticker' ? 'sticker' : 'picture'} src={src} alt={message.caption ?? (message.kind === 'sticker' ? 'sticker' : 'image')} />;
}

/** Other media: fetched when asked for, and saved under its name. */
function Download({ instanceId, message }: { instanceId: string; message: Message }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const name = message.media?.file_name ?? `${message.kind}-${message.message_id}`;
  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      const link = document.createElement('a');
      link.href = await mediaOf(instanceId, message);
      link.download = name;
      link.click();
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  const size = message.media ? ` (${Math.max(1, Math.round(message.media.file_length / 1024))} KB)` : '';
  return (
    <>
      <button type="button" class="secondary small" disabled={busy} onClick={save}>
        ⬇ {message.media?.voice ? 'Voice note' : name}
        {size}
      </button>
      {error && <p class="error">{error}</p>}
    </>
  );
}

function Body({ instanceId, message }: { instanceId: string; message: Message }) {
  if (message.revoked) return <p class="deleted">🚫 This message was deleted</p>;
  return (
    <>
      {(message.kind === 'image' || message.kind === 'sticker') && message.media && <Picture instanceId={instanceId} message={message} />}
      {message.media && message.kind !== 'image' && message.kind !== 'sticker' && <Download instanceId={instanceId} message={message} />}
      {message.text !== undefined && <p class="words">{message.text}</p>}
      {message.caption !== undefined && <p class="words">{message.caption}</p>}
      {message.location && (
        <p>
          📍 {message.location.name ?? 'Location'} ({message.location.latitude}, {message.location.longitude})
        </p>
      )}
      {message.contacts?.map((c) => <p key={c.display_name}>👤 {c.display_name}</p>)}
      {message.poll && (
        <div class="poll">
          <p>
            <strong>📊 {message.poll.name}</strong>
          </p>
          <ul>
            {message.poll.options.map((o) => (
              <li key={o.name}>
                {o.name}: <strong>{o.votes}</strong> {o.votes === 1 ? 'vote' : 'votes'}
              </li>
            ))}
          </ul>
        </div>
      )}
      {!message.text && !message.caption && !message.media && !message.poll && !message.location && !message.contacts && <p class="muted">({message.kind})</p>}
    </>
  );
}

/** One message as a bubble: in on the left, out on the right, with its quote, reactions, time and ticks. */
export function Bubble({ instanceId, message, quoted, onReply }: { instanceId: string; message: Message; quoted?: Message | null; onReply: (m: Message) => void }) {
  const tick = message.status ? TICKS[message.status] : undefined;
  return (
    <li class={`bubble ${message.from_me ? 'out' : 'in'}`} data-message-id={message.message_id}>
      {!message.from_me && message.push_name && <p class="author">{message.push_name}</p>}
      {message.reply_to && (
        <blockquote class="quote">{quoted ? `${quoted.from_me ? 'You' : quoted.push_name || quoted.sender_phone}: ${preview(quoted)}` : 'a message'}</blockquote>
      )}
      <Body instanceId={instanceId} message={message} />
      {message.reactions.length > 0 && (
        <p class="reactions" aria-label="reactions">
          {message.reactions.map((r) => (
            <span key={r.sender_jid} title={r.sender_jid}>
              {r.emoji}
            </span>
          ))}
        </p>
      )}
      <p class="stamp">
        {message.edited_at && !message.revoked && <span class="edited">edited · </span>}
        <time dateTime={message.timestamp}>{time(message.timestamp)}</time>
        {tick && (
          <span class={`tick ${message.status === 'read' || message.status === 'played' ? 'seen' : ''}`} title={tick.label} aria-label={tick.label}>
            {' '}
            {tick.mark}
          </span>
        )}
        {message.status === 'failed' && (
          <span class="failed" role="note">
            {' '}
            ⚠ failed: {message.error?.reason ?? 'not sent'}
            {message.error?.code ? ` (${message.error.code})` : ''}
          </span>
        )}
        {!message.revoked && (
          <button type="button" class="link reply" onClick={() => onReply(message)} aria-label="Reply to this message">
            {' '}
            Reply
          </button>
        )}
      </p>
    </li>
  );
}
