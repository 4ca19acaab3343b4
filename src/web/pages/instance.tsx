import { useEffect, useState } from 'preact/hooks';
import { call, messageOf, type Instance } from '../api.js';
import { DeliveryLog } from '../components/delivery-log.js';
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

export function InstancePage({ id }: { id: string }) {
  const [instance, setInstance] = useState<Instance | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [sandbox, setSandbox] = useState(false);
  const [createdToken] = useState(() => takeCreatedToken(id));

  useEffect(() => {
    call<Instance>('GET', `/instances/${id}`).then(setInstance, (err) => setError(messageOf(err)));
  }, [id]);

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
          <p class="muted">
            <code>{instance.id}</code> · {instance.billing_status.toLowerCase()}
            {instance.expired_at ? ` until ${new Date(instance.expired_at).toLocaleDateString()}` : ''}
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
          <Pairing instanceId={instance.id} />
          {sandbox && <SandboxPhones instanceId={instance.id} />}
          <WebhookSettings instanceId={instance.id} />
          <DeliveryLog instanceId={instance.id} />
          <HelpdeskSettings instanceId={instance.id} />
          <Stats instanceId={instance.id} />
          <History instanceId={instance.id} />
          <InstanceSettings instance={instance} onChange={setInstance} />
        </>
      )}
    </>
  );
}
