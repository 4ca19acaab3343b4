/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { expect } from 'chai';
import sharp from 'sharp';
import { newInstance } from '../support/gateway.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';
import { screenshot, useSignedInApp } from './browser.js';

/** The account's profile, its groups' members and invite link, and its contacts with blocking, on the instance page. */
describe('web app: profile, groups and contacts (in chromium, on the sandbox)', function () {
  this.timeout(90_000);
  const { t, owner, page } = useSignedInApp({ MESSAGING_NETWORK: 'sandbox' });
  const api = (method: string, path: string, body?: unknown) => t.api(method, path, { token: owner.jwt, ...(body === undefined ? {} : { body }) });
  const account = async (phone: string) => (await api('GET', `/sandbox/accounts/${phone}`)).body;
  const far = async (jid: string) => (await api('GET', `/sandbox/groups/${jid}`)).body;
  let friend: { phone: string; jid: string };
  let newcomer: { phone: string; jid: string };
  let mine: { phone: string; jid: string };
  let id: string;
  let group: string;

  before(async () => {
    friend = await newPhone(t.api, owner, { push_name: 'Friend' });
    newcomer = await newPhone(t.api, owner, { push_name: 'Newcomer' });
    mine = await newPhone(t.api, owner, { push_name: 'Me', contacts: [friend.phone] });
    ({ id } = await newInstance(t.api, owner, { name: 'Front desk' }));
    await pairByQr(t.api, owner, id, mine.phone);
    const made = await api('POST', `/instances/${id}/group/create`, { name: 'Team', participants: [friend.phone] });
    expect(made.status, made.text).to.equal(200);
    group = made.body.data.jid;
    await page.goto(`${t.gateway.url}/app/instances/${id}`);
  });

  it('changes the name, the about and the picture', async () => {
    const section = page.locator('section[aria-labelledby="profile-title"]');
    await section.getByText('Me', { exact: true }).waitFor();
    await section.getByLabel('Profile name').fill('Front Desk');
    await section.getByLabel('About').fill('open 9-5');
    await section.getByRole('button', { name: 'Save profile' }).click();
    await section.getByText('Profile saved.').waitFor();
    expect(await account(mine.phone)).to.include({ push_name: 'Front Desk', about: 'open 9-5' });

    const png = await sharp({ create: { width: 300, height: 300, channels: 3, background: '#3060c0' } }).png().toBuffer();
    await section.getByLabel('Picture (JPEG or PNG)').setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: png });
    await section.getByRole('button', { name: 'Set picture' }).click();
    await section.getByText('Picture set.').waitFor();
    await section.getByRole('img', { name: 'Profile picture' }).waitFor();
    expect((await account(mine.phone)).profile_picture_id).to.be.a('string');
  });

  it("shows a group's members: adds one (the network's answer per person), promotes, removes, and shows and resets the invite link", async () => {
    const section = page.locator('section[aria-labelledby="groups-title"]');
    await section.getByRole('button', { name: 'Team' }).click();
    const members = section.locator('#group-detail table');
    await members.getByRole('cell', { name: `+${friend.phone}`, exact: true }).waitFor();

    await section.getByLabel('Add people (phone numbers)').fill(`+${newcomer.phone}, ${friend.phone}`);
    await section.getByRole('button', { name: 'Add', exact: true }).click();
    await section.getByText(`+${newcomer.phone}: done; +${friend.phone}: already there`).waitFor();
    await members.getByRole('cell', { name: `+${newcomer.phone}`, exact: true }).waitFor();
    expect((await far(group)).participants.map((p: any) => p.phone)).to.include(newcomer.phone);

    await section.getByRole('button', { name: `Promote +${friend.phone}` }).click();
    await section.getByRole('button', { name: `Demote +${friend.phone}` }).waitFor();
    expect((await far(group)).participants).to.deep.include({ phone: friend.phone, admin: true, super_admin: false });

    await section.getByRole('button', { name: `Remove +${newcomer.phone}` }).click();
    await section.getByText(`+${newcomer.phone}: done`).waitFor();
    await waitFor(async () => (await members.getByRole('cell', { name: `+${newcomer.phone}`, exact: true }).count()) === 0, 'the member gone from the table');
    expect((await far(group)).participants.map((p: any) => p.phone)).to.not.include(newcomer.phone);

    await section.getByRole('button', { name: 'Show invite link' }).click();
    const link = section.locator('#group-invite');
    await link.waitFor();
    const first = await link.textContent();
    expect(first).to.equal(`https://chat.whatsapp.com/${(await far(group)).invite_code}`);
    await section.getByRole('button', { name: 'Reset invite link' }).click();
    await section.getByText('A new invite link replaces the old one').waitFor();
    const second = await link.textContent();
    expect(second).to.not.equal(first);
    expect(second).to.equal(`https://chat.whatsapp.com/${(await far(group)).invite_code}`);
    await screenshot(page, '40-groups');
  });

  it('lists contacts and blocks and unblocks one', async () => {
    const section = page.locator('section[aria-labelledby="contacts-title"]');
    await section.getByRole('cell', { name: `+${friend.phone}`, exact: true }).waitFor();
    await section.getByRole('button', { name: `Block +${friend.phone}` }).click();
    await section.getByRole('button', { name: `Unblock +${friend.phone}` }).waitFor();
    expect((await account(mine.phone)).blocked).to.deep.equal([friend.jid]);
    await screenshot(page, '41-contacts');
    await section.getByRole('button', { name: `Unblock +${friend.phone}` }).click();
    await section.getByRole('button', { name: `Block +${friend.phone}` }).waitFor();
    expect((await account(mine.phone)).blocked).to.deep.equal([]);
  });
});
