import { useState } from 'preact/hooks';
import { call, messageOf, type Instance } from '../api.js';
import { Alert, Notice } from './notices.js';

interface Props {
  instance: Instance;
  onChange: (instance: Instance) => void;
}

/** Rename, a new instance token (shown once), and cancelling, each confirmed where it bites. */
export function InstanceSettings({ instance, onChange }: Props) {
  const [name, setName] = useState(instance.name);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [token, setToken] = useState<string | null>(null);
  const [confirmCancel, setConfirmCancel] = useState(false);
  const [flags, setFlags] = useState({ reject_calls: instance.reject_calls === true, auto_read_messages: instance.auto_read_messages === true });
  const path = `/instances/${instance.id}`;

  const act = async (work: () => Promise<void>) => {
    setError(null);
    setNotice(null);
    try {
      await work();
    } catch (err) {
      setError(messageOf(err));
    }
  };

  const rename = (event: Event) => {
    event.preventDefault();
    return act(async () => {
      onChange(await call<Instance>('PATCH', path, { name: name.trim() }));
      setNotice('Name saved.');
    });
  };
  // A switch shows its new state at once and goes back if the gateway refuses it. PATCH always
  // names the instance (the spec requires it): the current name goes with the switch.
  const setFlag = (flag: 'reject_calls' | 'auto_read_messages', on: boolean) => {
    setFlags((shown) => ({ ...shown, [flag]: on }));
    return act(async () => {
      try {
        onChange(await call<Instance>('PATCH', path, { name: instance.name, [flag]: on }));
      } catch (err) {
        setFlags((shown) => ({ ...shown, [flag]: !on }));
        throw err;
      }
      setNotice(flag === 'reject_calls' ? `Calls are ${on ? 'rejected' : 'let through'}.` : `Messages are ${on ? 'marked read on arrival' : 'left unread'}.`);
    });
  };
  const rotateToken = () => act(async () => setToken((await call<{ token: string }>('POST', `${path}/token/rotate`)).token));
  const subscribe = () =>
    act(async () => {
      onChange(await call<Instance>('POST', `${path}/subscribe`));
      setNotice('Subscribed.');
    });
  const resume = () =>
    act(async () => {
      onChange(await call<Instance>('POST', `${path}/resume-subscription`));
      setNotice('The subscription goes on.');
    });
  const canSubscribe = instance.billing_status !== 'ACTIVE';
  const cancel = () =>
    act(async () => {
      onChange(await call<Instance>('DELETE', `${path}/cancel`));
      setConfirmCancel(false);
      setNotice('Cancellation saved.');
    });

  return (
    <section class="card" aria-labelledby="settings-title">
      <h2 id="settings-title">Instance</h2>
      <form onSubmit={rename} class="inline" noValidate>
        <label for="rename">Name</label>
        <input id="rename" required minLength={3} maxLength={255} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <button type="submit" class="secondary">
          Rename
        </button>
      </form>
      <label class="check">
        <input type="checkbox" checked={flags.reject_calls} onChange={(e) => void setFlag('reject_calls', e.currentTarget.checked)} /> Reject incoming calls
      </label>
      <label class="check">
        <input type="checkbox" checked={flags.auto_read_messages} onChange={(e) => void setFlag('auto_read_messages', e.currentTarget.checked)} /> Mark incoming
        messages read
      </label>
      <Alert message={error} />
      <Notice message={notice} />
      <p class="muted">
        Billing: {instance.billing_status.toLowerCase()}
        {instance.cancel_at ? `, ends ${new Date(instance.cancel_at).toLocaleString()}` : ''}
      </p>
      {token && (
        <div role="status">
          <p>
            <strong>New instance token</strong>, shown only now; the old one no longer works:
          </p>
          <code id="instance-token" class="wrap">
            {token}
          </code>
        </div>
      )}
      <div class="actions">
        {canSubscribe && (
          <button type="button" onClick={subscribe}>
            Subscribe
          </button>
        )}
        {instance.billing_status === 'ACTIVE' && instance.cancel_at && (
          <button type="button" onClick={resume}>
            Resume subscription
          </button>
        )}
        <button type="button" class="secondary" onClick={rotateToken}>
          New instance token
        </button>
        {instance.billing_status !== 'CANCELED' && !instance.cancel_at && !confirmCancel && (
          <button type="button" class="secondary danger" onClick={() => setConfirmCancel(true)}>
            Cancel instance…
          </button>
        )}
      </div>
      {confirmCancel && (
        <div role="group" aria-label="Confirm cancellation">
          <p>A paid instance stays active to the end of its period; any other stops at once. Cancel it?</p>
          <button type="button" class="danger" onClick={cancel}>
            Yes, cancel it
          </button>{' '}
          <button type="button" class="secondary" onClick={() => setConfirmCancel(false)}>
            Keep it
          </button>
        </div>
      )}
    </section>
  );
}
