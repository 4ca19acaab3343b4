/* eslint-disable @typescript-eslint/no-explicit-any -- the document is read field by field */
import { expect } from 'chai';
import { useGateway } from '../support/use-gateway.js';

/** Every route of CONTRACT.md's groups/contacts/profile/privacy/labels/status section, and the sandbox's far end, in the OpenAPI document with its schemas. */
describe('groups, contacts, profile, privacy, labels and status posts in the OpenAPI document', () => {
  const { t } = useGateway({ MESSAGING_NETWORK: 'sandbox' });

  const routes: [string, string, { body?: string[]; answers?: string[] }][] = [
    ['post', '/instances/{id}/group/create', { body: ['name', 'participants'] }],
    ['get', '/instances/{id}/group/{jid}', {}],
    ['patch', '/instances/{id}/group/{jid}', { body: ['name', 'topic', 'is_announce', 'is_locked', 'disappearing_timer'] }],
    ['post', '/instances/{id}/group/{jid}/participants', { body: ['action', 'participants'], answers: ['200', '207'] }],
    ['get', '/instances/{id}/group/{jid}/invite', {}],
    ['post', '/instances/{id}/group/{jid}/invite/revoke', {}],
    ['get', '/instances/{id}/group/invite', {}],
    ['post', '/instances/{id}/group/join', { body: ['invite_url'] }],
    ['post', '/instances/{id}/group/{jid}/leave', {}],
    ['post', '/instances/{id}/group/{jid}/picture', { body: ['media'] }],
    ['get', '/instances/{id}/contacts', {}],
    ['get', '/instances/{id}/contacts/{jid}', {}],
    ['post', '/instances/{id}/contacts/block', { body: ['phone', 'blocked'] }],
    ['get', '/instances/{id}/contacts/blocklist', {}],
    ['patch', '/instances/{id}/profile', { body: ['push_name', 'about'] }],
    ['post', '/instances/{id}/profile/picture', { body: ['media'] }],
    ['delete', '/instances/{id}/profile/picture', {}],
    ['get', '/instances/{id}/privacy', {}],
    ['patch', '/instances/{id}/privacy', { body: ['last_seen', 'online', 'profile_picture', 'about', 'groups', 'read_receipts'] }],
    ['get', '/instances/{id}/labels', {}],
    ['post', '/instances/{id}/chat/label', { body: ['phone', 'label_id', 'labeled'] }],
    ['post', '/instances/{id}/status/send', { body: ['text', 'media', 'background_color', 'font', 'recipients'] }],
    ['get', '/sandbox/groups/{jid}', {}],
    ['get', '/sandbox/accounts/{phone}', {}],
    ['post', '/sandbox/phones/{phone}/join', { body: ['invite_url'] }],
    ['get', '/sandbox/phones/{phone}/statuses', {}],
  ];

  it('describes each route: a summary, its body\'s fields, its answers with their schemas and its refusals', async () => {
    const doc = (await t.api('GET', '/openapi.json')).body;
    const missing: string[] = [];
    for (const [method, path, want] of routes) {
      const op = doc.paths[path]?.[method];
      if (!op) {
        missing.push(`${method} ${path}`);
        continue;
      }
      expect(op.summary, `${method} ${path} summary`).to.be.a('string').and.not.equal('');
      for (const code of want.answers ?? ['200']) {
        expect(op.responses[code]?.content?.['application/json']?.schema, `${method} ${path} answers ${code}`).to.be.an('object');
      }
      expect(Object.keys(op.responses).some((c) => c.startsWith('4')), `${method} ${path} says its refusals`).to.equal(true);
      if (want.body) {
        const schema = op.requestBody?.content?.['application/json']?.schema;
        const properties = schema?.properties ?? doc.components?.schemas?.[String(schema?.$ref).split('/').pop() ?? '']?.properties;
        expect(properties, `${method} ${path} body`).to.include.keys(want.body);
      }
    }
    expect(missing).to.deep.equal([]);
    const privacy = doc.paths['/instances/{id}/privacy'].patch.requestBody.content['application/json'].schema;
    expect(JSON.stringify(privacy.properties.last_seen)).to.include('contact_blacklist');
  });
});
