import type { InstanceDoc } from '../../projections/instances/instances-projection.js';

/** The spec's Instance with its fields in the spec's order. */
export function presentInstance(doc: InstanceDoc, publicUrl: string, token?: string) {
  return {
    id: doc._id,
    name: doc.name,
    ...(token === undefined ? {} : { token }),
    url: `${publicUrl}/app/instances/${doc._id}`,
    webhook: doc.webhook,
    events_subscribe: doc.events_subscribe.join(','),
    reject_calls: doc.reject_calls,
    auto_read_messages: doc.auto_read_messages,
    connected: doc.connected,
    connected_at: doc.connected_at,
    whatsapp_push_name: doc.whatsapp_push_name,
    whatsapp_jid: doc.whatsapp_jid,
    billing_status: doc.billing_status,
    created_at: doc.created_at,
    updated_at: doc.updated_at,
    cancel_at: doc.cancel_at,
    expired_at: doc.expired_at,
    labels: doc.labels,
  };
}
