import { useState } from 'preact/hooks';
import { callData, messageOf } from '../api.js';
import type { LiveStream } from '../live/stream.js';
import { useLiveRead } from '../live/use-live.js';
import { Alert, Notice } from './notices.js';

interface Contact {
  jid: string;
  phone: string;
  name?: string;
  push_name?: string;
  business_name?: string;
  blocked?: boolean;
}

interface ContactPage {
  total: number;
  content: Contact[];
}

/** The account's contacts, searchable, each blockable; and a number blocked without being a contact. */
export function Contacts({ instanceId, live }: { instanceId: string; live: LiveStream }) {
  const [query, setQuery] = useState('');
  const [page, setPage] = useState<ContactPage | null>(null);
  const [blocking, setBlocking] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const search = (q: string) => callData<ContactPage>('GET', `/instances/${instanceId}/contacts?size=50&query=${encodeURIComponent(q)}`).then(setPage);

  // Contacts arrive with the history at pairing and with whoever writes.
  useLiveRead(
    live,
    {
      read: () => search(query).catch((err: unknown) => setError(messageOf(err))),
      wants: (event) => event.type === 'Connected' || event.type === 'HistorySync' || event.type === 'Message',
      fallbackMs: 10_000,
    },
    [instanceId],
  );

  const act = async (work: () => Promise<string>) => {
    setError(null);
    setNotice(null);
    try {
      setNotice(await work());
    } catch (err) {
      setError(messageOf(err));
    }
  };

  const setBlocked = (phone: string, blocked: boolean) =>
    act(async () => {
      await callData('POST', `/instances/${instanceId}/contacts/block`, { phone, blocked });
      await search(query);
      return `+${phone} ${blocked ? 'blocked: nothing they send reaches this number' : 'unblocked'}.`;
    });

  return (
    <section class="card" aria-labelledby="contacts-title">
      <h2 id="contacts-title">Contacts</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void act(async () => (await search(query), ''));
        }}
        noValidate
      >
        <label for="contacts-query">Search by name or number</label>
        <input id="contacts-query" type="search" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
        <button type="submit">Search</button>
      </form>
      {page && page.content.length === 0 && <p class="muted">No contacts{query ? ' match' : ' yet'}.</p>}
      {page && page.content.length > 0 && (
        <table class="people">
          <caption class="muted">{page.total} contacts</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Number</th>
              <th scope="col">Blocked</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {page.content.map((c) => (
              <tr key={c.jid}>
                <td>{c.name || c.push_name || c.business_name || '—'}</td>
                <td>+{c.phone}</td>
                <td>{c.blocked ? 'blocked' : 'no'}</td>
                <td>
                  <button type="button" class="secondary" aria-label={`${c.blocked ? 'Unblock' : 'Block'} +${c.phone}`} onClick={() => void setBlocked(c.phone, !c.blocked)}>
                    {c.blocked ? 'Unblock' : 'Block'}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const phone = blocking.replace(/[^0-9]/g, '');
          if (!phone) return setError('Give the number to block.');
          void setBlocked(phone, true).then(() => setBlocking(''));
        }}
        noValidate
      >
        <label for="contacts-block">Block a number</label>
        <input id="contacts-block" inputMode="tel" value={blocking} onInput={(e) => setBlocking(e.currentTarget.value)} />
        <button type="submit">Block</button>
      </form>
      <Notice message={notice} />
      <Alert message={error} />
    </section>
  );
}
