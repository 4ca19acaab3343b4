import { useEffect, useState } from 'preact/hooks';
import { ApiError, callData, messageOf, type Qr, type SessionStatus } from '../api.js';
import type { LiveStream } from '../live/stream.js';
import { useLiveRead } from '../live/use-live.js';
import { Alert } from './notices.js';

/** While the stream is down, the status is read this often so "connected" still shows. */
const STATUS_FALLBACK_MS = 3000;
/**
 * The QR is not on the stream (the network's pairing material is never stored, and the stream
 * is the log), so while the pairing panel is open it is read this often as the network rotates it.
 */
const QR_EVERY_MS = 3000;
/** The profile's details follow the connection in events the stream does not carry: read once more. */
const PROFILE_SETTLES_MS = 2000;

/** The session: its status, and pairing by QR until it is connected; live from the stream. */
export function Pairing({ instanceId, live }: { instanceId: string; live: LiveStream }) {
  const [status, setStatus] = useState<SessionStatus | null>(null);
  const [pairing, setPairing] = useState(false);
  const [qr, setQr] = useState<Qr | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [codePhone, setCodePhone] = useState('');
  const [code, setCode] = useState<string | null>(null);
  const connected = status?.connected === true;

  const readStatus = useLiveRead(
    live,
    {
      read: async () => {
        try {
          setStatus(await callData<SessionStatus>('GET', `/instances/${instanceId}/session/status`));
        } catch (err) {
          setError(messageOf(err));
        }
      },
      wants: (event) => event.type === 'Connected' || event.type === 'Disconnected',
      fallbackMs: STATUS_FALLBACK_MS,
    },
    [instanceId],
  );

  useEffect(() => {
    if (!connected) return;
    const timer = setTimeout(readStatus, PROFILE_SETTLES_MS);
    return () => clearTimeout(timer);
  }, [connected]);

  const askCode = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      const phone = codePhone.replace(/[^0-9]/g, '');
      setCode((await callData<{ code: string }>('GET', `/instances/${instanceId}/session/paircode/${encodeURIComponent(phone || codePhone)}`)).code);
    } catch (err) {
      setError(messageOf(err));
    }
  };

  const logout = async () => {
    setError(null);
    try {
      await callData('POST', `/instances/${instanceId}/session/logout`);
      readStatus();
    } catch (err) {
      setError(messageOf(err));
    }
  };

  useEffect(() => {
    if (!pairing || connected) return;
    let stopped = false;
    const refresh = async () => {
      try {
        const next = await callData<Qr>('GET', `/instances/${instanceId}/session/qr`);
        if (!stopped) setQr((old) => (old?.qr === next.qr ? old : next));
        if (!stopped) setError(null);
      } catch (err) {
        // 409: paired meanwhile; the stream's Connected says so.
        if (!stopped && !(err instanceof ApiError && err.status === 409)) setError(messageOf(err));
      }
    };
    void refresh();
    const timer = setInterval(refresh, QR_EVERY_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [instanceId, pairing, connected]);

  useEffect(() => {
    if (connected) {
      setPairing(false);
      setQr(null);
      setCode(null);
    }
  }, [connected]);

  return (
    <section class="card" aria-labelledby="session-title">
      <h2 id="session-title">Session</h2>
      <p role="status" aria-live="polite">
        Status:{' '}
        <strong id="session-status" class={connected ? 'ok' : ''}>
          {status === null ? 'loading' : connected ? 'connected' : pairing ? 'waiting for the phone' : 'not connected'}
        </strong>
        {connected && (status?.push_name || status?.phone) && (
          <span>
            {' '}
            as {status?.push_name} {status?.phone ? `(+${status.phone})` : ''}
          </span>
        )}
      </p>
      {connected && status && (status.about || status.business_name || status.verified_name || status.website || status.profile_url) && (
        <dl class="secrets" id="profile">
          {status.business_name && (
            <>
              <dt>Business</dt>
              <dd>{status.business_name}</dd>
            </>
          )}
          {status.verified_name && (
            <>
              <dt>Verified name</dt>
              <dd>{status.verified_name}</dd>
            </>
          )}
          {status.about && (
            <>
              <dt>About</dt>
              <dd>{status.about}</dd>
            </>
          )}
          {status.website && (
            <>
              <dt>Website</dt>
              <dd>{status.website}</dd>
            </>
          )}
          {status.profile_url && (
            <>
              <dt>Profile link</dt>
              <dd>
                <a href={status.profile_url} rel="noreferrer noopener" target="_blank">
                  {status.profile_url}
                </a>
              </dd>
            </>
          )}
        </dl>
      )}
      <Alert message={error} />
      {!connected && status !== null && !pairing && (
        <button type="button" onClick={() => setPairing(true)}>
          Pair a phone
        </button>
      )}
      {pairing && !connected && (
        <div class="pairing">
          <ol>
            <li>Open WhatsApp on the phone.</li>
            <li>Go to Settings, then Linked devices, then Link a device.</li>
            <li>Point the phone at this code. It changes every few seconds; this page follows.</li>
          </ol>
          {qr ? <img class="qr" src={qr.qr_image} width={264} height={264} alt="QR code to scan with the phone" /> : <p>Preparing the code…</p>}
          {qr && (
            <details>
              <summary>The code as text</summary>
              <code id="qr-string" class="wrap">
                {qr.qr}
              </code>
            </details>
          )}
          <form onSubmit={askCode} class="inline" noValidate>
            <label for="paircode-phone">Or link with a code: the phone's number, with country code</label>
            <input id="paircode-phone" type="tel" inputMode="tel" autoComplete="tel" value={codePhone} onInput={(e) => setCodePhone(e.currentTarget.value)} />
            <button type="submit" class="secondary">
              Get a code
            </button>
          </form>
          {code && (
            <p>
              On the phone, choose "Link with phone number instead" and type <strong id="pair-code" class="code">{code}</strong>
            </p>
          )}
          <button type="button" class="secondary" onClick={() => setPairing(false)}>
            Cancel
          </button>
        </div>
      )}
      {connected && (
        <button type="button" class="secondary" onClick={logout}>
          Log out (unpair the phone)
        </button>
      )}
    </section>
  );
}
