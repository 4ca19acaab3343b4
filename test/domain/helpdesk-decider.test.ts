import { helpdeskDecider, maskToken, type SaveHelpdesk } from '../../src/domain/helpdesk/helpdesk-decider.js';
import type { HelpdeskConfiguredData } from '../../src/domain/helpdesk/events.js';
import { expect } from 'chai';
import { deciderSpec } from '../support/decider-spec.js';

const spec = deciderSpec(helpdeskDecider);

const settings = {
  enabled: true, url: 'https://desk.example.com', account_id: '1', name_inbox: 'WhatsApp', sign_msg: false, sign_delimiter: '\n',
  number: '', reopen_conversation: false, conversation_pending: false, import_contacts: false, import_messages: false,
  days_limit_import_messages: 3, organization: '', logo: '', ignore_jids: [], ignore_groups: false,
};

const save = (over: Partial<SaveHelpdesk['data']> = {}): SaveHelpdesk => ({
  type: 'SaveHelpdesk',
  data: { settings, inbox_id: 4, inbox_identifier: 'abc', inbox_secret_sealed: null, callback_generation: 0, callback_path_hash: 'h0', new_config_id: 'cfg-1', ...over },
});

const configured = (over: Partial<HelpdeskConfiguredData> = {}): { type: 'HelpdeskConfigured'; data: HelpdeskConfiguredData } => ({
  type: 'HelpdeskConfigured',
  data: { config_id: 'cfg-1', settings, token_sealed: 'sealed-1', token_masked: 'abcd…wxyz', inbox_id: 4, inbox_identifier: 'abc', inbox_secret_sealed: null, callback_generation: 0, callback_path_hash: 'h0', ...over },
});

describe('helpdesk decider', () => {
  it('records a first save with its token', () => {
    spec.given([]).when(save({ token: { sealed: 'sealed-1', masked: 'abcd…wxyz' } })).then([configured()]);
  });

  it('refuses a first save without a token', () => {
    spec.given([]).when(save()).thenThrows('invalid_input');
  });

  it('keeps the token and the config id when a later save omits the token', () => {
    spec.given([configured()]).when(save({ new_config_id: 'cfg-2', inbox_id: 5 })).then([configured({ inbox_id: 5 })]);
  });

  it('refuses a save whose callback path was derived before a removal', () => {
    spec.given([configured(), { type: 'HelpdeskRemoved', data: {} }]).when(save({ token: { sealed: 's', masked: 'm' } })).thenThrows('conflict');
  });

  it('starts a new configuration, with a new id, after a removal', () => {
    spec
      .given([configured(), { type: 'HelpdeskRemoved', data: {} }])
      .when(save({ token: { sealed: 's2', masked: 'm2' }, callback_generation: 1, callback_path_hash: 'h1', new_config_id: 'cfg-2' }))
      .then([configured({ config_id: 'cfg-2', token_sealed: 's2', token_masked: 'm2', callback_generation: 1, callback_path_hash: 'h1' })]);
  });

  it('removes an existing configuration, and answers 404 when there is none', () => {
    spec.given([configured()]).when({ type: 'RemoveHelpdesk' }).then([{ type: 'HelpdeskRemoved', data: {} }]);
    spec.given([]).when({ type: 'RemoveHelpdesk' }).thenThrows('not_found');
  });

  it('masks a token as CONTRACT.md says', () => {
    expect(maskToken('abcdefghijklmnop')).to.equal('abcd…mnop');
    expect(maskToken('short')).to.equal('*****');
    expect(maskToken('elevenchars')).to.equal('***********');
  });
});
