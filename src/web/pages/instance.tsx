import { useEffect, useMemo, useState } from 'preact/hooks';
import { call, messageOf, type Instance } from '../api.js';
import { Contacts } from '../components/contacts.js';
import { DeliveryLog } from '../components/delivery-log.js';
import { Groups } from '../components/groups.js';
import { ProfileSettings } from '../components/profile-settings.js';
import { ExportSettings } from '../components/export-settings.js';
import { Bots } from '../components/bots.js';
import { HelpdeskSettings } from '../components/helpdesk-settings.js';
import { History } from '../components/history.js';
import { Stats } from '../components/stats.js';
import { InstanceSettings } from '../components/instance-settings.js';
import { Pairing } from '../components/pairing.js';
import { SandboxPhones } from '../components/sandbox-phones.js';
import { WebhookSettings } from '../components/webhook-settings.js';
import { takeCreatedToken } from '../created.js';
import { hrefOf, onLink } from '../router.js';
import { Alert } from '../components/notices.js';
import { LiveStream } from '../live/stream.js';
import { useLiveState } from '../live/use-live.js';

export function InstancePage({ id }: { id: string }) {
  const [instance, setInstance] = useState<Instance | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [sandbox, setSandbox] = useState(false);
  const [createdToken] = useState(() => takeCreatedToken(id));
  // One stream for the page, once the instance is known to be the account's; the parts share it.
  const live = useMemo(() => (instance ? new LiveStream(instance.id) : null), [instance?.id]);
  const liveState = useLiveState(live);

  useEffect(() => {
    call<Instance>('GET', `/instances/${id}`).then(setInstance, (err) => setError(messageOf(err)));
  }, [id]);

  useEffect(() => {
    live?.start();
    return () => live?.stop();
  }, [live]);

  useEffect(() => {
    call<{ network: string }>('GET', '/app/settings').then((settings) => setSandbox(settings.network === 'sandbox'), () => setSandbox(false));
  }, []);

  return (
    <>
      <p>
        <a href={hrefOf({ view: 'instances' })} onClick={onLink({ view: 'instances' })}>
          ← All instances
        </a>
      </p>
      <h1 tabIndex={-1}>{instance ? instance.name : 'Instance'}</h1>
      <Alert message={error} />
      {instance && (
        <>
          <p class="muted meta">
            <code>{instance.id}</code> · {instance.billing_status.toLowerCase()}
            {instance.expired_at ? ` until ${new Date(instance.expired_at).toLocaleDateString()}` : ''} ·{' '}
            <span id="live-state" class={liveState === 'open' ? 'live on' : 'live'}>
              {liveState === 'open' ? 'live' : liveState === 'down' ? 'reconnecting (reading every few seconds)' : 'connecting'}
            </span>
          </p>
          <p>
            <a id="open-conversations" href={hrefOf({ view: 'conversations', id: instance.id })} onClick={onLink({ view: 'conversations', id: instance.id })}>
              Conversations →
            </a>
          </p>
          {createdToken && (
            <div role="status" class="card">
              <p>
                <strong>Instance token</strong>, shown only now (servers send it as <code>X-Instance-Token</code>):
              </p>
              <code id="created-token" class="wrap">
                {createdToken}
              </code>
            </div>
          )}
          {live && <Pairing instanceId={instance.id} live={live} />}
          {live && sandbox && <SandboxPhones instanceId={instance.id} live={live} />}
          {live && <ProfileSettings instanceId={instance.id} live={live} />}
          {live && <Groups instanceId={instance.id} live={live} />}
          {live && <Contacts instanceId={instance.id} live={live} />}
          <WebhookSettings instanceId={instance.id} />
          {live && <DeliveryLog instanceId={instance.id} live={live} />}
          {live && <ExportSettings instanceId={instance.id} live={live} />}
          <Bots instanceId={instance.id} />
          <HelpdeskSettings instanceId={instance.id} />
          <Stats instanceId={instance.id} />
          <History instanceId={instance.id} />
          <InstanceSettings instance={instance} onChange={setInstance} />
        </>
      )}
    </>
  );
}
