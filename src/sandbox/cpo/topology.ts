// How the sandbox network presents its CPO parties to an eMSP (its topology):
// - 'platform' (the default): one platform hosting its parties. Its credentials
//   list each party as a CPO role; a request to a functional module is
//   addressed (OCPI-to) to one of them, and a command to the party that owns
//   the location or session it is about.
// - 'hub': a roaming hub in front of its parties. Its credentials name only the
//   hub (credentials: "A Hub SHALL only reports itself as role: Hub"); it
//   reports its parties through HubClientInfo (a ClientInfo per party, pushed to
//   the eMSP after registration and at every change, and listed on its Sender
//   interface); what the parties send is relayed with their own party in
//   OCPI-from; a command is forwarded to the party its OCPI-to names, only while
//   that party is CONNECTED (4003 otherwise); a push addressed to the hub is a
//   Broadcast Push, relayed to every CONNECTED party; a GET All addressed to the
//   hub combines its parties' objects.
// The hub and its parties run in this one process: the hub does not call the
// parties over HTTP, but what crosses the wire to the eMSP is what a hub
// sends. Client statuses are kept in memory (a restart has every party
// CONNECTED again, and pushes its ClientInfo anew to nobody until asked).
import type { CredentialsRole } from '../../ocpi-protocol/credentials.ts';
import type { ClientInfo, ConnectionStatus } from '../../ocpi-protocol/hub-client-info.ts';
import type { PartyRef } from '../../ocpi-protocol/transport.ts';
import type { Clock } from '../../platform/clock.ts';

export const TOPOLOGIES = ['platform', 'hub'] as const;
export type Topology = (typeof TOPOLOGIES)[number];

export const DEFAULT_HUB_PARTY: PartyRef = { country_code: 'DE', party_id: 'HUB' };

const keyOf = (p: PartyRef) => `${p.country_code}*${p.party_id}`.toUpperCase();
const same = (a: PartyRef, b: PartyRef) => keyOf(a) === keyOf(b);

export interface TopologyDeps {
  kind: Topology;
  clock: Clock;
  /** The CPO parties of the network, with their business details. */
  parties: readonly (PartyRef & { name: string; website?: string })[];
  hubParty?: PartyRef;
}

export function createTopology(deps: TopologyDeps) {
  const hub =
    deps.kind === 'hub'
      ? { country_code: (deps.hubParty ?? DEFAULT_HUB_PARTY).country_code.toUpperCase(), party_id: (deps.hubParty ?? DEFAULT_HUB_PARTY).party_id.toUpperCase() }
      : undefined;
  const startedAt = deps.clock.now().toISOString();
  const clients = new Map<string, ClientInfo>(
    deps.kind === 'hub'
      ? deps.parties.map((p) => [keyOf(p), { country_code: p.country_code, party_id: p.party_id, role: 'CPO', status: 'CONNECTED', last_updated: startedAt }])
      : [],
  );
  const isOurParty = (p: PartyRef) => deps.parties.some((q) => same(p, q));

  return {
    kind: deps.kind,
    /** The hub's own party (topology 'hub'). */
    hub,

    /** Our credentials roles: each party as a CPO (a platform), or the hub alone. */
    roles(): CredentialsRole[] {
      if (hub) return [{ role: 'HUB', business_details: { name: 'Sandbox Roaming Hub' }, country_code: hub.country_code, party_id: hub.party_id }];
      return deps.parties.map((p) => ({
        role: 'CPO',
        business_details: { name: p.name, ...(p.website ? { website: p.website } : {}) },
        party_id: p.party_id,
        country_code: p.country_code,
      }));
    },

    /** Whether a request may be addressed (OCPI-to) to `party`: one of our parties, or the hub. */
    addressable: (party: PartyRef): boolean => isOurParty(party) || (hub !== undefined && same(party, hub)),

    /** Whether `party` is the hub itself (a Broadcast Push, a GET All via the hub). */
    isHub: (party: PartyRef): boolean => hub !== undefined && same(party, hub),

    /** A party's connection status at the hub (a platform's parties are always reachable). */
    status: (party: PartyRef): ConnectionStatus => (hub ? (clients.get(keyOf(party))?.status ?? 'OFFLINE') : 'CONNECTED'),

    /** The hub's ClientInfo of every party, as served on its Sender interface. */
    clientInfos: (): ClientInfo[] => [...clients.values()],

    /** Changes a party's status at the hub; the ClientInfo to push. */
    setStatus(party: PartyRef, status: ConnectionStatus): ClientInfo {
      const current = clients.get(keyOf(party));
      if (!hub || !current) throw new Error(`${keyOf(party)} is not a party behind this hub`);
      const next: ClientInfo = { ...current, status, last_updated: deps.clock.now().toISOString() };
      clients.set(keyOf(party), next);
      return next;
    },

    /**
     * The parties a Token push addressed (OCPI-to) to `to` reaches: that party, or, addressed to the hub (a Broadcast
     * Push), every party the hub reports CONNECTED.
     */
    tokenReceivers(to: PartyRef): string[] {
      if (hub && same(to, hub)) return [...clients.values()].filter((c) => c.status === 'CONNECTED').map(keyOf);
      return isOurParty(to) ? [keyOf(to)] : [];
    },
  };
}

export type NetworkTopology = ReturnType<typeof createTopology>;
