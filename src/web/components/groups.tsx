import { useState } from 'preact/hooks';
import { ApiError, call, callData, messageOf } from '../api.js';
import type { LiveStream } from '../live/stream.js';
import { useLiveRead } from '../live/use-live.js';
import { Alert, Notice } from './notices.js';

interface Participant {
  jid: string;
  phone_number: string;
  is_admin: boolean;
  is_super_admin: boolean;
  display_name: string;
}

interface Group {
  jid: string;
  name: string;
  topic: string;
  is_admin: boolean;
  participant_count: number;
  participants: Participant[];
}

interface ParticipantAnswer {
  jid: string;
  phone_number: string;
  status: number;
}

/** The network's per-person answers to a participant change, in words. */
const ANSWERS: Record<number, string> = { 200: 'done', 403: 'not allowed', 408: 'not on WhatsApp, or left', 409: 'already there' };
const digits = (text: string) => text.replace(/[^0-9]/g, '');

/** The account's groups: a group's members (add, remove, promote, demote) and its invite link. */
export function Groups({ instanceId, live }: { instanceId: string; live: LiveStream }) {
  const [groups, setGroups] = useState<Group[] | null>(null);
  const [offline, setOffline] = useState(false);
  const [open, setOpen] = useState<Group | null>(null);
  const [invite, setInvite] = useState('');
  const [newName, setNewName] = useState('');
  const [newPeople, setNewPeople] = useState('');
  const [adding, setAdding] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const base = `/instances/${instanceId}/group`;

  const list = () => callData<{ groups: Group[] }>('GET', `${base}/list?pageSize=100`).then((page) => setGroups(page.groups));
  const show = async (jid: string) => {
    setOpen(await callData<Group>('GET', `${base}/${jid}`));
    setInvite('');
  };

  // Groups are the network's: read while connected, again when the session connects or a group changes.
  useLiveRead(
    live,
    {
      read: async () => {
        try {
          await list();
          setOffline(false);
        } catch (err) {
          if (err instanceof ApiError && err.status === 409) setOffline(true);
          else setError(messageOf(err));
        }
      },
      wants: (event) => event.type === 'Connected' || event.type === 'Disconnected' || event.type.includes('Group'),
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

  const create = (event: Event) => {
    event.preventDefault();
    return act(async () => {
      const participants = newPeople.split(/[\s,;]+/).map(digits).filter(Boolean);
      const group = await callData<Group>('POST', `${base}/create`, { name: newName.trim(), participants });
      setNewName('');
      setNewPeople('');
      setOpen(group);
      await list();
      return `Group ${group.name} created.`;
    });
  };

  /** A participant change; the network answers each person, and so does the notice. */
  const change = (action: 'add' | 'remove' | 'promote' | 'demote', phones: string[]) =>
    act(async () => {
      if (!open) return '';
      const answer = await call<{ data: { participants: ParticipantAnswer[] } }>('POST', `${base}/${open.jid}/participants`, { action, participants: phones });
      await show(open.jid);
      if (action === 'add') setAdding('');
      return answer.data.participants.map((p) => `+${p.phone_number}: ${ANSWERS[p.status] ?? `answered ${p.status}`}`).join('; ');
    });

  const add = (event: Event) => {
    event.preventDefault();
    const phones = adding.split(/[\s,;]+/).map(digits).filter(Boolean);
    if (phones.length === 0) return setError('Give the phone number of the person to add.');
    return change('add', phones);
  };

  const showInvite = (revoke: boolean) =>
    act(async () => {
      if (!open) return '';
      const answer = await callData<{ invite_url: string }>(revoke ? 'POST' : 'GET', `${base}/${open.jid}/invite${revoke ? '/revoke' : ''}`);
      setInvite(answer.invite_url);
      return revoke ? 'A new invite link replaces the old one, which no longer works.' : '';
    });

  return (
    <section class="card" aria-labelledby="groups-title">
      <h2 id="groups-title">Groups</h2>
      {offline && <p class="muted">Pair the instance to see and change its groups.</p>}
      {!offline && groups && groups.length === 0 && <p class="muted">No groups yet.</p>}
      {!offline && groups && groups.length > 0 && (
        <ul class="plain" aria-label="Groups">
          {groups.map((g) => (
            <li key={g.jid}>
              <button type="button" class="link" aria-pressed={open?.jid === g.jid} onClick={() => void act(async () => (await show(g.jid), ''))}>
                {g.name || g.jid}
              </button>{' '}
              <span class="muted">{g.participant_count} members</span>
            </li>
          ))}
        </ul>
      )}
      {open && (
        <div id="group-detail">
          <h3>{open.name}</h3>
          {open.topic && <p class="muted">{open.topic}</p>}
          <table class="people">
            <caption class="muted">Members</caption>
            <thead>
              <tr>
                <th scope="col">Member</th>
                <th scope="col">Role</th>
                {open.is_admin && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {open.participants.map((p) => (
                <tr key={p.jid}>
                  <td>{p.phone_number ? `+${p.phone_number}` : p.jid}</td>
                  <td>{p.is_super_admin ? 'owner' : p.is_admin ? 'admin' : 'member'}</td>
                  {open.is_admin && (
                    <td>
                      {!p.is_super_admin && (
                        <span class="actions">
                          <button type="button" class="secondary" aria-label={`${p.is_admin ? 'Demote' : 'Promote'} +${p.phone_number}`} onClick={() => void change(p.is_admin ? 'demote' : 'promote', [p.phone_number])}>
                            {p.is_admin ? 'Demote' : 'Promote'}
                          </button>{' '}
                          <button type="button" class="secondary" aria-label={`Remove +${p.phone_number}`} onClick={() => void change('remove', [p.phone_number])}>
                            Remove
                          </button>
                        </span>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
          {open.is_admin ? (
            <>
              <form onSubmit={add} noValidate>
                <label for="group-add">Add people (phone numbers)</label>
                <input id="group-add" inputMode="tel" value={adding} onInput={(e) => setAdding(e.currentTarget.value)} />
                <button type="submit">Add</button>
              </form>
              <p>
                <button type="button" class="secondary" onClick={() => void showInvite(false)}>
                  Show invite link
                </button>{' '}
                <button type="button" class="secondary" onClick={() => void showInvite(true)}>
                  Reset invite link
                </button>
              </p>
              {invite && (
                <p>
                  Invite link: <code id="group-invite">{invite}</code>
                </p>
              )}
            </>
          ) : (
            <p class="muted">Only the group's admins change its members and share its link.</p>
          )}
        </div>
      )}
      {!offline && groups && (
        <form onSubmit={create} noValidate>
          <h3>New group</h3>
          <label for="group-name">Group name</label>
          <input id="group-name" maxLength={100} value={newName} onInput={(e) => setNewName(e.currentTarget.value)} />
          <label for="group-people">Members (phone numbers, separated by commas)</label>
          <input id="group-people" inputMode="tel" value={newPeople} onInput={(e) => setNewPeople(e.currentTarget.value)} />
          <button type="submit">Create group</button>
        </form>
      )}
      <Notice message={notice} />
      <Alert message={error} />
    </section>
  );
}
