import type { WABusinessProfile, WASocket } from '@whiskeysockets/baileys';
import type { SessionEventData } from '../../domain/session/events.js';
import type { ProfileSnapshot } from '../port.js';
import { compact } from './compact.js';
import { jidUser, normalizeJid } from './jid.js';
import type { BaileysSocket } from './socket.js';

type ProfileSocket = Pick<BaileysSocket, 'user' | 'authState' | 'fetchStatus' | 'profilePictureUrl' | 'getBusinessProfile'>;

export interface FetchedProfile {
  snapshot: ProfileSnapshot;
  /** The business description: ProfileUpdated carries it, ProfileSnapshot has no field for it. */
  businessDescription?: string;
}

/**
 * The connected account's profile, fetched fresh. Each lookup is a separate query that may fail
 * on its own (privacy settings, no picture, not a business): a failed one leaves its fields out
 * rather than failing the whole profile.
 */
export async function fetchProfile(sock: ProfileSocket, onError: (what: string, error: unknown) => void): Promise<FetchedProfile> {
  const user = sock.user;
  if (!user) throw new Error('no account on this connection');
  const jid = normalizeJid(user.id) ?? user.id;
  const business = !!sock.authState.creds.platform?.startsWith('smb');
  const attempt = async <T>(what: string, work: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await work();
    } catch (error) {
      onError(what, error);
      return undefined;
    }
  };
  const [status, pictureUrl, businessProfile] = await Promise.all([
    attempt('status', () => sock.fetchStatus(jid)),
    attempt('picture', () => sock.profilePictureUrl(jid, 'image')),
    business ? attempt('business profile', () => sock.getBusinessProfile(jid)) : Promise.resolve(undefined),
  ]);
  const bp = businessProfile || undefined;
  return {
    snapshot: compact<ProfileSnapshot>({
      phone: jidUser(jid) ?? '',
      jid,
      push_name: user.name || sock.authState.creds.me?.name || undefined,
      about: aboutOf(status),
      picture_url: pictureUrl || undefined,
      verified_name: user.verifiedName || undefined,
      business_name: business ? user.verifiedName || user.name || undefined : undefined,
      business: bp ? businessOf(bp) : undefined,
    }),
    businessDescription: bp?.description || undefined,
  };
}

/** The fetched profile as the ProfileUpdated event stores it. */
export function profileUpdatedData({ snapshot, businessDescription }: FetchedProfile): SessionEventData<'ProfileUpdated'> {
  return compact({
    push_name: snapshot.push_name,
    about: snapshot.about,
    picture_id: snapshot.picture_id,
    picture_url: snapshot.picture_url,
    verified_name: snapshot.verified_name,
    business_name: snapshot.business_name,
    business: snapshot.business || businessDescription ? compact({ ...snapshot.business, description: businessDescription }) : undefined,
  });
}

/** fetchStatus answers a USync list: `[{ id, status: { status, setAt } }]`. */
function aboutOf(result: Awaited<ReturnType<WASocket['fetchStatus']>> | undefined): string | undefined {
  const entry = result?.[0]?.status;
  if (typeof entry !== 'object' || entry === null) return undefined;
  const status = (entry as { status?: unknown }).status;
  return typeof status === 'string' && status ? status : undefined;
}

/**
 * WhatsApp gives the category by name only; ProfileSnapshot wants ids, so categories are left
 * out rather than invented.
 */
function businessOf(bp: WABusinessProfile): NonNullable<ProfileSnapshot['business']> {
  return compact({
    business_hours_timezone: bp.business_hours?.timezone || undefined,
    address: bp.address || undefined,
    email: bp.email || undefined,
    website: bp.website?.[0] || undefined,
  });
}
