import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { call, messageOf, type Instance } from '../api.js';
import { AnswerBox } from '../components/answer-box.js';
import { Bubble } from '../components/bubble.js';
import { Alert } from '../components/notices.js';
import { chatMessages, listChats, markRead, preview, searchMessages, type Chat, type Message } from '../conversations.js';
import { LiveStream, type LiveEvent } from '../live/stream.js';
import { useLiveRead, useLiveState } from '../live/use-live.js';
import { hrefOf, onLink } from '../router.js';

const PAGE = 30;
/** Chats at the top of the list whose last message is shown. */
const PREVIEWS = 12;
/** Events after which what the view shows may have changed: a message (new, edited, reacted...), a receipt, history. */
const WANTED = new Set(['Message', 'ReadReceipt', 'HistorySync']);

const chatName = (c: Chat) => c.name || (c.phone ? `+${c.phone}` : c.jid);
/** Today's messages by their time, older ones by their day. */
const when = (ms: number) => {
  if (ms <= 0) return '';
  const at = new Date(ms);
  return at.toDateString() === new Date().toDateString() ? at.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' }) : at.toLocaleDateString(undefined, { dateStyle: 'short' });
};

/** Per instance: the chat list (with search), a chat's thread, and the answer box, kept live by the realtime stream. */
export function ConversationsPage({ id }: { id: string }) {
  const [instance, setInstance] = useState<Instance | null>(null);
  const [error, setError] = useState<string | null>(null);
  const live = useMemo(() => (instance ? new LiveStream(instance.id) : null), [instance?.id]);
  const liveState = useLiveState(live);

  useEffect(() => {
    call<Instance>('GET', `/instances/${id}`).then(setInstance, (err) => setError(messageOf(err)));
  }, [id]);
  useEffect(() => {
    live?.start();
    return () => live?.stop();
  }, [live]);

  return (
    <>
      <p>
        <a href={hrefOf({ view: 'instance', id })} onClick={onLink({ view: 'instance', id })}>
          ← {instance?.name ?? 'Instance'}
        </a>
      </p>
      <h1 tabIndex={-1}>Conversations</h1>
      <Alert message={error} />
      {instance && live && (
        <>
          <p class="muted meta">
            <span id="live-state" class={liveState === 'open' ? 'live on' : 'live'}>
              {liveState === 'open' ? 'live' : liveState === 'down' ? 'reconnecting (reading every few seconds)' : 'connecting'}
            </span>
          </p>
          <Conversations instance={instance} live={live} />
        </>
      )}
    </>
  );
}

function Conversations({ instance, live }: { instance: Instance; live: LiveStream }) {
  const [chats, setChats] = useState<Chat[]>([]);
  const [previews, setPreviews] = useState<Record<string, { at: number; text: string }>>({});
  const [open, setOpen] = useState<Chat | null>(null);
  const [messages, setMessages] = useState<Message[]>([]);
  const [older, setOlder] = useState<string | null>(null);
  const [replyTo, setReplyTo] = useState<Message | null>(null);
  const [filter, setFilter] = useState('');
  const [found, setFound] = useState<Message[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const previewsRef = useRef(previews);
  previewsRef.current = previews;
  const shownRef = useRef(messages);
  shownRef.current = messages;
  const bottom = useRef<HTMLDivElement>(null);
  const newest = useRef<string | undefined>(undefined);

  /**
   * The chat list, and the last message of each of the first chats that moved since it was last
   * read: one read per chat, so only the top of the list (the instance's request budget is shared).
   */
  const readChats = async (): Promise<Set<string>> => {
    const list = await listChats(instance.id);
    setChats(list);
    const stale = list.slice(0, PREVIEWS).filter((c) => previewsRef.current[c.jid]?.at !== c.last_message_timestamp_ms);
    const fresh = await Promise.all(
      stale.map(async (c) => {
        const page = await chatMessages(instance.id, c.jid, 1).catch(() => null);
        const last = page?.messages[0];
        return page ? ([c.jid, { at: c.last_message_timestamp_ms, text: last ? `${last.from_me ? 'You: ' : ''}${preview(last)}` : '' }, last?.message_id] as const) : null;
      }),
    );
    const read = fresh.filter((f) => f !== null);
    if (read.length) setPreviews((p) => ({ ...p, ...Object.fromEntries(read.map(([jid, v]) => [jid, v])) }));
    return new Set(read.map(([, , m]) => m).filter((m): m is string => !!m));
  };

  /** The open chat's newest page, with the older pages already loaded kept below it. */
  const readThread = async (chat: Chat): Promise<Set<string>> => {
    const page = await chatMessages(instance.id, chat.jid, PAGE);
    const fresh = new Set(page.messages.map((m) => m.message_id));
    const oldestAt = page.messages.at(-1)?.timestamp;
    const kept = page.next_before === null || oldestAt === undefined ? [] : shownRef.current.filter((m) => !fresh.has(m.message_id) && m.timestamp <= oldestAt);
    setMessages([...page.messages, ...kept]);
    if (kept.length === 0) setOlder(page.next_before);
    return fresh;
  };

  const read = async () => {
    try {
      const [inList, inThread] = await Promise.all([readChats(), open ? readThread(open) : Promise.resolve(new Set<string>())]);
      setError(null);
      return new Set([...inList, ...inThread]);
    } catch (err) {
      setError(messageOf(err));
      return undefined;
    }
  };
  const readNow = useLiveRead(
    live,
    {
      read,
      wants: (event: LiveEvent) => WANTED.has(event.type),
      keyOf: (event: LiveEvent) => (event.type === 'Message' ? ((event.event.Info as { ID?: string } | undefined)?.ID ?? undefined) : undefined),
      fallbackMs: 5000,
    },
    [open?.jid],
  );

  // Opening a chat: its thread from the newest, read on the phone too when the instance reads automatically.
  useEffect(() => {
    setMessages([]);
    setOlder(null);
    setReplyTo(null);
    newest.current = undefined;
    if (!open) return;
    const unread = open.messages_unread > 0 || open.marked_as_unread;
    if (!unread || !instance.auto_read_messages) return;
    chatMessages(instance.id, open.jid, 20)
      .then((page) => page.messages.filter((m) => !m.from_me).map((m) => m.message_id))
      .then((ids) => (ids.length ? markRead(instance.id, open.jid, ids) : undefined))
      .catch((err: unknown) => setError(messageOf(err)));
  }, [open?.jid]);

  // A new message at the bottom brings the thread down to it.
  useEffect(() => {
    const top = messages[0]?.message_id;
    if (top !== newest.current) {
      newest.current = top;
      bottom.current?.scrollIntoView({ block: 'end' });
    }
  }, [messages]);

  // Searching messages: a moment after typing stops.
  useEffect(() => {
    if (!/[\p{L}\p{N}]/u.test(filter)) {
      setFound(null);
      return;
    }
    const timer = setTimeout(() => {
      searchMessages(instance.id, filter).then(
        (page) => setFound(page.messages),
        () => setFound([]),
      );
    }, 300);
    return () => clearTimeout(timer);
  }, [filter]);

  const loadOlder = async () => {
    if (!open || !older) return;
    try {
      const page = await chatMessages(instance.id, open.jid, PAGE, older);
      setMessages((shown) => [...shown, ...page.messages.filter((m) => !shown.some((s) => s.message_id === m.message_id))]);
      setOlder(page.next_before);
    } catch (err) {
      setError(messageOf(err));
    }
  };

  const shownChats = chats.filter((c) => {
    const q = filter.trim().toLowerCase();
    return !q || chatName(c).toLowerCase().includes(q) || c.phone.includes(q) || (previews[c.jid]?.text.toLowerCase().includes(q) ?? false);
  });
  const byId = new Map(messages.map((m) => [m.message_id, m]));
  const openChat = (jid: string) => setOpen(chats.find((c) => c.jid === jid) ?? { jid, phone: '', name: jid, archived: false, pinned: false, messages_unread: 0, marked_as_unread: false, is_group: jid.endsWith('@g.us'), last_message_timestamp_ms: 0 });

  return (
    <div class={`conversations ${open ? 'reading' : 'listing'}`}>
      <Alert message={error} />
      <section class="card chats" aria-labelledby="chats-title">
        <h2 id="chats-title">Chats</h2>
        <label for="chat-search">Search chats and messages</label>
        <input id="chat-search" type="search" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
        {found && (
          <>
            <h3>Messages</h3>
            {found.length === 0 ? (
              <p class="muted">No message holds those words.</p>
            ) : (
              <ul class="chat-list" aria-label="Messages found">
                {found.map((m) => (
                  <li key={m.message_id}>
                    <button type="button" class="chat" onClick={() => openChat(m.chat_jid)}>
                      <span class="name">{chats.find((c) => c.jid === m.chat_jid)?.name || m.chat_jid}</span>
                      <span class="last">{preview(m)}</span>
                    </button>
                  </li>
                ))}
              </ul>
            )}
            <h3>Chats</h3>
          </>
        )}
        {shownChats.length === 0 ? (
          <p class="muted">{chats.length === 0 ? 'No chat yet: messages appear here as they arrive.' : 'No chat matches.'}</p>
        ) : (
          <ul class="chat-list" aria-label="Chats">
            {shownChats.map((c) => (
              <li key={c.jid}>
                <button type="button" class={`chat ${open?.jid === c.jid ? 'current' : ''}`} onClick={() => setOpen(c)} aria-current={open?.jid === c.jid}>
                  <span class="name">
                    {c.pinned && <span title="pinned">📌 </span>}
                    {chatName(c)}
                  </span>
                  <span class="when">{when(c.last_message_timestamp_ms)}</span>
                  <span class="last">{previews[c.jid]?.text ?? ''}</span>
                  {c.archived && <span class="badge">archived</span>}
                  {(c.messages_unread > 0 || c.marked_as_unread) && (
                    <span class="badge unread" aria-label={`${c.messages_unread} unread`}>
                      {c.messages_unread > 0 ? c.messages_unread : '•'}
                    </span>
                  )}
                </button>
              </li>
            ))}
          </ul>
        )}
      </section>
      {open && (
        <section class="card thread" aria-labelledby="thread-title">
          <div class="thread-head">
            <button type="button" class="secondary small back" onClick={() => setOpen(null)}>
              ← Chats
            </button>
            <h2 id="thread-title">{chatName(open)}</h2>
          </div>
          {older && (
            <button type="button" class="secondary small" onClick={loadOlder}>
              Load older messages
            </button>
          )}
          <ol class="bubbles" aria-label={`Messages with ${chatName(open)}`}>
            {[...messages].reverse().map((m) => (
              <Bubble key={m.message_id} instanceId={instance.id} message={m} quoted={m.reply_to ? (byId.get(m.reply_to) ?? null) : undefined} onReply={setReplyTo} />
            ))}
          </ol>
          <div ref={bottom} />
          <AnswerBox instanceId={instance.id} jid={open.jid} replyTo={replyTo} onCancelReply={() => setReplyTo(null)} onSent={() => (setReplyTo(null), readNow())} />
        </section>
      )}
    </div>
  );
}
