import { useState } from 'preact/hooks';
import { call, callData, messageOf, type Qr } from '../api.js';
import type { LiveEvent, LiveStream } from '../live/stream.js';
import { useLiveRead } from '../live/use-live.js';
import { Alert, Notice } from './notices.js';

interface InboxMessage {
  message_id: string;
  from: string;
  chat: string;
  type: string;
  text?: string;
  timestamp: string | number;
}

/** While the stream is down, the inbox is read this often. */
const INBOX_FALLBACK_MS = 2000;

/** What the instance sent reaches the phone's inbox: the stream's Message from this instance. */
const sentByInstance = (event: LiveEvent) => event.type === 'Message' && (event.event.Info as { IsFromMe?: unknown } | undefined)?.IsFromMe === true;
const messageIdOf = (event: LiveEvent) => (event.event.Info as { ID?: unknown } | undefined)?.ID;

/**
 * The sandbox's simulated phones, for a newcomer without a phone: make one, let it scan this
 * instance's QR, send from another, and read what the instance sent. The sandbox lists no
 * phones, so the page remembers the ones made here.
 */
export function SandboxPhones({ instanceId, live }: { instanceId: string; live: LiveStream }) {
  const [phones, setPhones] = useState<string[]>([]);
  const [number, setNumber] = useState('');
  const [pushName, setPushName] = useState('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [text, setText] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [inboxOf, setInboxOf] = useState('');
  const [inbox, setInbox] = useState<InboxMessage[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const act = async (work: () => Promise<string>) => {
    setError(null);
    setNotice(null);
    try {
      setNotice(await work());
    } catch (err) {
      setError(messageOf(err));
    }
  };

  const create = (event: Event) => {
    event.preventDefault();
    return act(async () => {
      const phone = number.replace(/[^0-9]/g, '');
      await call('POST', '/sandbox/phones', { phone, push_name: pushName.trim() || `Phone ${phone}` });
      setPhones((list) => [...list, phone]);
      setFrom((current) => current || phone);
      setInboxOf((current) => current || phone);
      setNumber('');
      setPushName('');
      return `Phone +${phone} created.`;
    });
  };

  const scan = (phone: string) =>
    act(async () => {
      const { qr } = await callData<Qr>('GET', `/instances/${instanceId}/session/qr`);
      await call('POST', `/sandbox/phones/${phone}/scan`, { qr });
      return `+${phone} scanned the code.`;
    });

  const send = (event: Event) => {
    event.preventDefault();
    return act(async () => {
      const body = file ? { media: await mediaOf(file, text) } : { text };
      await call('POST', `/sandbox/phones/${from}/messages`, { to: to.replace(/[^0-9]/g, ''), ...body });
      setText('');
      setFile(null);
      return `Sent from +${from}.`;
    });
  };

  useLiveRead(
    live,
    {
      read: async () => {
        if (!inboxOf) return;
        try {
          const answer = await call<{ messages: InboxMessage[] }>('GET', `/sandbox/phones/${inboxOf}/inbox`);
          setInbox(answer.messages);
          return new Set(answer.messages.map((m) => m.message_id));
        } catch (err) {
          setError(messageOf(err));
        }
      },
      wants: sentByInstance,
      keyOf: (event) => {
        const id = messageIdOf(event);
        return typeof id === 'string' ? id : undefined;
      },
      fallbackMs: INBOX_FALLBACK_MS,
    },
    [inboxOf],
  );

  return (
    <section class="card" aria-labelledby="sandbox-title">
      <h2 id="sandbox-title">Sandbox phones</h2>
      <p class="muted">The network is simulated: these phones stand in for real ones.</p>
      <form onSubmit={create} class="inline" noValidate>
        <label for="sandbox-number">New phone: number with country code</label>
        <input id="sandbox-number" type="tel" inputMode="tel" value={number} onInput={(e) => setNumber(e.currentTarget.value)} />
        <label for="sandbox-name">Its name</label>
        <input id="sandbox-name" value={pushName} onInput={(e) => setPushName(e.currentTarget.value)} />
        <button type="submit" class="secondary">
          Create phone
        </button>
      </form>
      <Alert message={error} />
      <Notice message={notice} />
      {phones.length > 0 && (
        <>
          <ul class="phones">
            {phones.map((phone) => (
              <li key={phone}>
                <span>+{phone}</span>
                <button type="button" class="secondary small" onClick={() => scan(phone)}>
                  Scan this instance's QR with +{phone}
                </button>
              </li>
            ))}
          </ul>
          <form onSubmit={send} noValidate>
            <h3>Send a message</h3>
            <label for="sandbox-from">From</label>
            <select id="sandbox-from" value={from} onChange={(e) => setFrom(e.currentTarget.value)}>
              {phones.map((phone) => (
                <option value={phone} key={phone}>
                  +{phone}
                </option>
              ))}
            </select>
            <label for="sandbox-to">To (number with country code)</label>
            <input id="sandbox-to" type="tel" inputMode="tel" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
            <label for="sandbox-text">{file ? 'Caption' : 'Text'}</label>
            <input id="sandbox-text" value={text} onInput={(e) => setText(e.currentTarget.value)} />
            <label for="sandbox-file">Or a file (image, video, audio or document)</label>
            <input id="sandbox-file" type="file" onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
            <button type="submit">Send from the phone</button>
          </form>
          <h3>Inbox</h3>
          <label for="sandbox-inbox">Phone</label>
          <select id="sandbox-inbox" value={inboxOf} onChange={(e) => setInboxOf(e.currentTarget.value)}>
            {phones.map((phone) => (
              <option value={phone} key={phone}>
                +{phone}
              </option>
            ))}
          </select>
          {inbox.length === 0 ? (
            <p>Nothing received yet.</p>
          ) : (
            <ul class="inbox" aria-live="polite">
              {inbox.map((m) => (
                <li key={m.message_id}>
                  <span class="muted">{m.from.split('@')[0]}</span> {m.text ?? `(${m.type})`}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}

/** A picked file as the sandbox's media body: its kind from its type, its bytes as base64. */
async function mediaOf(file: File, caption: string): Promise<Record<string, string>> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  const type = file.type || 'application/octet-stream';
  const kind = ['image', 'video', 'audio'].find((k) => type.startsWith(`${k}/`)) ?? 'document';
  return { kind, mimetype: type, data_base64: btoa(binary), file_name: file.name, ...(caption ? { caption } : {}) };
}
