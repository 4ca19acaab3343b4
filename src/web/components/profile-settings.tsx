import { useRef, useState } from 'preact/hooks';
import { callData, messageOf, type SessionStatus } from '../api.js';
import type { LiveStream } from '../live/stream.js';
import { useLiveRead } from '../live/use-live.js';
import { fileBase64 } from './file-base64.js';
import { Alert, Notice } from './notices.js';

/** The paired account as others see it: its name, its about and its picture. */
export function ProfileSettings({ instanceId, live }: { instanceId: string; live: LiveStream }) {
  const [status, setStatus] = useState<SessionStatus | null>(null);
  const [name, setName] = useState('');
  const [about, setAbout] = useState('');
  const [picture, setPicture] = useState<File | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  // A read (the stream opening, a reconnect) keeps what the user is typing: a field follows the
  // network only while it still shows what was last read.
  const shown = useRef({ name: '', about: '' });
  const load = (next: SessionStatus) => {
    setStatus(next);
    const fresh = { name: next.push_name ?? '', about: next.about ?? '' };
    setName((current) => (current === shown.current.name ? fresh.name : current));
    setAbout((current) => (current === shown.current.about ? fresh.about : current));
    shown.current = fresh;
  };
  const reload = () => callData<SessionStatus>('GET', `/instances/${instanceId}/session/status`).then(load);

  useLiveRead(
    live,
    {
      read: () => reload().catch((err: unknown) => setError(messageOf(err))),
      wants: (event) => event.type === 'Connected' || event.type === 'Disconnected',
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

  const save = (event: Event) => {
    event.preventDefault();
    return act(async () => {
      // Only what changed goes to the network (a push name change is a sync with the phone).
      const body: Record<string, string> = {};
      if (name.trim() !== (status?.push_name ?? '')) body.push_name = name.trim();
      if (about !== (status?.about ?? '')) body.about = about;
      if (Object.keys(body).length === 0) return 'Nothing to change.';
      load(await callData<SessionStatus>('PATCH', `/instances/${instanceId}/profile`, body));
      return 'Profile saved.';
    });
  };

  const upload = (event: Event) => {
    event.preventDefault();
    return act(async () => {
      if (!picture) throw new Error('Choose a JPEG or PNG picture first.');
      await callData('POST', `/instances/${instanceId}/profile/picture`, { media: { data: await fileBase64(picture) } });
      await reload();
      return 'Picture set.';
    });
  };

  const removePicture = () =>
    act(async () => {
      await callData('DELETE', `/instances/${instanceId}/profile/picture`);
      await reload();
      return 'Picture removed.';
    });

  return (
    <section class="card" aria-labelledby="profile-title">
      <h2 id="profile-title">Profile</h2>
      {status && !status.connected && <p class="muted">Pair the instance to change its profile.</p>}
      {status?.connected && (
        <>
          <div class="profile-head">
            {status.profile_picture_url ? <img id="profile-picture" src={status.profile_picture_url} alt="Profile picture" width={64} height={64} /> : <span class="muted">No picture</span>}
            <span>
              <strong>{status.push_name || 'No name'}</strong>
              {status.phone && <span class="muted"> · +{status.phone}</span>}
            </span>
          </div>
          <form onSubmit={save} noValidate>
            <label for="profile-name">Profile name</label>
            <input id="profile-name" maxLength={25} value={name} onInput={(e) => setName(e.currentTarget.value)} />
            <label for="profile-about">About</label>
            <input id="profile-about" maxLength={139} value={about} onInput={(e) => setAbout(e.currentTarget.value)} />
            <button type="submit">Save profile</button>
          </form>
          <form onSubmit={upload} noValidate>
            <label for="profile-picture-file">Picture (JPEG or PNG)</label>
            <input id="profile-picture-file" type="file" accept="image/jpeg,image/png" onChange={(e) => setPicture(e.currentTarget.files?.[0] ?? null)} />
            <button type="submit">Set picture</button>{' '}
            {status.profile_picture_url && (
              <button type="button" class="secondary" onClick={() => void removePicture()}>
                Remove picture
              </button>
            )}
          </form>
        </>
      )}
      <Notice message={notice} />
      <Alert message={error} />
    </section>
  );
}
