// Which network addresses a webhook may reach (docs/API.md, `invalid_webhook_url` and Webhooks).
//
// Two moments use this module:
//   - payment creation: `checkWebhookUrl` is the static check of the URL text (scheme, length,
//     credentials, fragment, localhost, IP literals);
//   - delivery: `isDeliverableIp` is applied to every address the host resolves to, at connect time
//     (see src/webhooks/send.ts), because a host name can point anywhere and change at any time.
//
// Range matching is Node's `net.BlockList` (its own address parser, the one its sockets use), so
// every textual form of an address — `::ffff:127.0.0.1`, `::ffff:7f00:1`, `0:0:0:0:0:ffff:7f00:1` —
// is judged the same; the IPv4 inside a translation prefix is read with ipaddr.js (a kept parser)
// once BlockList has said which prefix it is. (ipaddr.js alone is not enough: it parses the
// deprecated IPv4-compatible `::a.b.c.d` as if it were IPv4-mapped `::ffff:a.b.c.d`.) The policy is
// ours: which ranges are not public (the tables below, IANA's special-purpose registries) and the
// rule that a translation prefix (IPv4-mapped, NAT64, 6to4) is only as public as the IPv4 inside it.
// Odd IPv4 forms in URLs (`2130706433`, `0x7f.1`, `127.1`) are normalised to dotted decimal by the
// WHATWG URL parser before they reach this module, and `net.isIP` gates what counts as an address.
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The category of an IP address.
 * - `public`: globally routable unicast, the only category a webhook may reach in production.
 * - `loopback`: 127.0.0.0/8, ::1 (and ::ffff:127.x.x.x).
 * - `private`: RFC 1918, CGNAT 100.64.0.0/10, IPv6 unique-local fc00::/7 and site-local fec0::/10.
 * - `link-local`: 169.254.0.0/16 (cloud metadata lives here), fe80::/10.
 * - `unspecified`: 0.0.0.0/8 ("this network"; Linux connects 0.0.0.0 to the local host), ::.
 * - `multicast`, `broadcast`: 224.0.0.0/4, ff00::/8; 255.255.255.255.
 * - `reserved`: documentation, benchmarking, protocol-assignment and future-use ranges, deprecated
 *   IPv4-compatible IPv6, translation prefixes that embed a non-public IPv4, anything in IPv6 outside
 *   the global unicast 2000::/3.
 * - `invalid`: not an IP address.
 */
type IpCategory = 'public' | 'loopback' | 'private' | 'link-local' | 'unspecified' | 'multicast' | 'broadcast' | 'reserved' | 'invalid';

type Category = Exclude<IpCategory, 'public' | 'invalid'>;
type Range = { list: net.BlockList; category: Category };
type Family = 'ipv4' | 'ipv6';

function subnet(cidr: string, family: Family): net.BlockList {
  const [address, bits] = cidr.split('/') as [string, string];
  const list = new net.BlockList();
  list.addSubnet(address, Number(bits), family);
  return list;
}

const v4 = (cidr: string, category: Category): Range => ({ list: subnet(cidr, 'ipv4'), category });
const v6 = (cidr: string, category: Category): Range => ({ list: subnet(cidr, 'ipv6'), category });

/** IANA IPv4 special-purpose registry and friends. Order matters only for overlaps (first wins). */
const IPV4_RANGES: Range[] = [
  v4('255.255.255.255/32', 'broadcast'),
  v4('0.0.0.0/8', 'unspecified'),
  v4('127.0.0.0/8', 'loopback'),
  v4('10.0.0.0/8', 'private'),
  v4('172.16.0.0/12', 'private'),
  v4('192.168.0.0/16', 'private'),
  v4('100.64.0.0/10', 'private'), // carrier-grade NAT, shared address space
  v4('169.254.0.0/16', 'link-local'),
  v4('192.0.0.0/24', 'reserved'), // IETF protocol assignments
  v4('192.0.2.0/24', 'reserved'), // TEST-NET-1
  v4('192.88.99.0/24', 'reserved'), // deprecated 6to4 relay anycast
  v4('198.18.0.0/15', 'reserved'), // benchmarking
  v4('198.51.100.0/24', 'reserved'), // TEST-NET-2
  v4('203.0.113.0/24', 'reserved'), // TEST-NET-3
  v4('224.0.0.0/4', 'multicast'),
  v4('240.0.0.0/4', 'reserved'), // future use
];

/** Ranges inside the IPv6 global unicast space 2000::/3 that are nevertheless not public. */
const IPV6_RANGES_IN_GLOBAL: Range[] = [
  v6('2001::/23', 'reserved'), // IETF protocol assignments: Teredo, benchmarking, ORCHID…
  v6('2001:db8::/32', 'reserved'), // documentation
  v6('3fff::/20', 'reserved'), // documentation (RFC 9637)
];

const IPV4_MAPPED = subnet('::ffff:0:0/96', 'ipv6');
const NAT64_WELL_KNOWN = subnet('64:ff9b::/96', 'ipv6');
const GLOBAL_UNICAST = subnet('2000::/3', 'ipv6');
const SIX_TO_FOUR = subnet('2002::/16', 'ipv6');

/** Ranges outside 2000::/3 that get a more precise category than `reserved`. */
const IPV6_RANGES_OUTSIDE_GLOBAL: Range[] = [
  v6('::/128', 'unspecified'),
  v6('::1/128', 'loopback'),
  v6('fc00::/7', 'private'), // unique-local
  v6('fec0::/10', 'private'), // deprecated site-local
  v6('fe80::/10', 'link-local'),
  v6('ff00::/8', 'multicast'),
];

function lookupRange(address: string, family: Family, ranges: Range[]): Category | null {
  for (const { list, category } of ranges) if (list.check(address, family)) return category;
  return null;
}

function classifyV4(address: string): IpCategory {
  return lookupRange(address, 'ipv4', IPV4_RANGES) ?? 'public';
}

/** The category of the IPv4 address in bytes `at`…`at+3` of an IPv6 translation prefix. */
function embedded(address: string, at: number): IpCategory {
  return classifyV4(
    ipaddr.IPv6.parse(address)
      .toByteArray()
      .slice(at, at + 4)
      .join('.'),
  );
}

function classifyV6(address: string): IpCategory {
  // ::ffff:a.b.c.d — IPv4-mapped: a dual-stack socket really connects to a.b.c.d.
  if (IPV4_MAPPED.check(address, 'ipv6')) return embedded(address, 12);
  // 64:ff9b::a.b.c.d — NAT64 well-known prefix: public only when the IPv4 behind it is.
  if (NAT64_WELL_KNOWN.check(address, 'ipv6')) return embedded(address, 12) === 'public' ? 'public' : 'reserved';
  if (!GLOBAL_UNICAST.check(address, 'ipv6')) {
    // Includes ::a.b.c.d (deprecated IPv4-compatible), 64:ff9b:1::/48 (local-use NAT64),
    // 100::/64 (discard) and everything IANA has not allocated for global unicast.
    return lookupRange(address, 'ipv6', IPV6_RANGES_OUTSIDE_GLOBAL) ?? 'reserved';
  }
  const special = lookupRange(address, 'ipv6', IPV6_RANGES_IN_GLOBAL);
  if (special !== null) return special;
  // 2002:a.b.c.d::/48 — 6to4: public only when the embedded IPv4 is.
  if (SIX_TO_FOUR.check(address, 'ipv6')) return embedded(address, 2) === 'public' ? 'public' : 'reserved';
  return 'public';
}

/**
 * Classifies an IP address given as text: dotted-decimal IPv4, or IPv6 (optionally in brackets).
 * Anything else, including a host name or a shorthand such as `127.1`, is `invalid`.
 * An IPv6 address with a zone (`fe80::1%eth0`) is scoped to one link and is never `public`.
 */
export function classifyIp(ip: string): IpCategory {
  let text = ip.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  const zone = text.indexOf('%');
  const bare = zone === -1 ? text : text.slice(0, zone);
  const family = net.isIP(bare);
  if (family === 4 && zone === -1) return classifyV4(bare);
  if (family !== 6) return 'invalid';
  const category = classifyV6(bare);
  return zone !== -1 && category === 'public' ? 'reserved' : category;
}

/**
 * What keeps `raw` from being an address customers and merchants reach (empty: nothing): not
 * HTTPS, a bind address (0.0.0.0, ::), a loopback, private, link-local or otherwise non-public IP,
 * or localhost. For BASE_URL and CHECKOUT_BASE_URL off sandbox (the start and `kassa doctor`).
 */
export function publicUrlProblems(raw: string): string[] {
  const url = new URL(raw);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const problems: string[] = [];
  if (url.protocol !== 'https:') problems.push('not HTTPS');
  const category = classifyIp(host);
  if (category === 'unspecified') problems.push(`${host} is a bind address, not one customers can reach`);
  else if (category !== 'invalid' && category !== 'public') problems.push(`${host} is ${describeCategory(category)}`);
  else if (host === 'localhost' || host.endsWith('.localhost')) problems.push(`${host} is the local host`);
  return problems;
}

/** One DNS label: letters, digits and hyphens (IDNs arrive as punycode from `new URL`), 1 to 63 characters. */
const DNS_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/i;

/**
 * True when `hostname` (a URL's `hostname`) is a host and nothing else: a DNS name of letter,
 * digit and hyphen labels, a dotted IPv4 address or a bracketed IPv6 one. `new URL` lets through
 * hosts such as `cdn.example.com;script-src` or `a,b` (the WHATWG URL standard forbids fewer
 * characters in a host than DNS does), which must never reach a header such as a
 * Content-Security-Policy, where `;` and `,` separate directives and policies.
 */
export function isHostName(hostname: string): boolean {
  if (hostname.startsWith('[')) return hostname.endsWith(']') && net.isIPv6(hostname.slice(1, -1));
  if (hostname.length === 0 || hostname.length > 253) return false;
  return hostname
    .replace(/\.$/, '')
    .split('.')
    .every((label) => DNS_LABEL.test(label));
}

/** True only for a globally routable unicast address (see {@link IpCategory}). */
export function isPublicIp(ip: string): boolean {
  return classifyIp(ip) === 'public';
}

/**
 * Whether a webhook delivery may connect to this resolved address. Public addresses always; with
 * `allowInsecure` (WEBHOOK_ALLOW_INSECURE, development and tests) also loopback and private ones —
 * never link-local (cloud metadata endpoints), unspecified, multicast, broadcast or reserved.
 */
export function isDeliverableIp(ip: string, options: { allowInsecure: boolean }): boolean {
  const category = classifyIp(ip);
  if (category === 'public') return true;
  return options.allowInsecure && (category === 'loopback' || category === 'private');
}

/** A short description of a non-public category, for error messages. */
export function describeCategory(category: IpCategory): string {
  switch (category) {
    case 'public':
      return 'a public address';
    case 'loopback':
      return 'a loopback address';
    case 'private':
      return 'a private network address';
    case 'link-local':
      return 'a link-local address';
    case 'unspecified':
      return 'an unspecified address';
    case 'multicast':
      return 'a multicast address';
    case 'broadcast':
      return 'a broadcast address';
    case 'reserved':
      return 'a reserved address';
    case 'invalid':
      return 'not an IP address';
  }
}

const WEBHOOK_URL_MAX_LENGTH = 512;

type UrlCheck = { ok: true } | { ok: false; reason: string };

interface CheckWebhookUrlOptions {
  /** WEBHOOK_ALLOW_INSECURE: also accept `http:` and loopback hosts (`localhost`, 127.x, ::1). */
  allowInsecure: boolean;
  /** Field name used in the reasons; default `webhookURL` (the same rules apply to `returnURL`). */
  name?: string;
}

/** Host-name suffixes that never lead to a public host: RFC 6761/6762, RFC 8375, ICANN `.internal`. */
const NON_PUBLIC_SUFFIXES = ['.local', '.internal', '.home.arpa', '.localdomain'];

/**
 * The static check of a webhook (or return) URL at payment creation. It looks at the text only:
 * the host name is resolved — and checked again — at every delivery.
 *
 * Accepted: an absolute `https:` URL (`http:` too with `allowInsecure`) of at most 512 characters,
 * with no user name or password, no fragment, no white space or control characters, whose host is
 * a public DNS name (at least one dot; not `localhost`, `*.localhost`, `.local`, `.internal`,
 * `.home.arpa`) or a public IP literal. IP literals are judged after WHATWG normalisation, so
 * `2130706433`, `0x7f.1`, `127.1` and `[::ffff:127.0.0.1]` are all seen as loopback.
 * With `allowInsecure`, loopback hosts (`localhost`, `*.localhost`, 127.0.0.0/8, ::1) and
 * single-label or `.local`-style names are accepted; private IP literals still are not.
 *
 * Reasons are short sentences fit for an API error message.
 */
export function checkWebhookUrl(url: string, options: CheckWebhookUrlOptions): UrlCheck {
  const name = options.name ?? 'webhookURL';
  const fail = (reason: string): UrlCheck => ({ ok: false, reason });
  if (typeof url !== 'string' || url === '') return fail(`${name} must be an absolute URL.`);
  if ([...url].length > WEBHOOK_URL_MAX_LENGTH) {
    return fail(`${name} must be at most ${WEBHOOK_URL_MAX_LENGTH} characters long.`);
  }
  // The URL parser silently drops tabs and newlines and trims spaces; refuse them instead, so that
  // the stored text is the URL that was checked.
  if (/[\s\u0000-\u001f\u007f]/.test(url)) return fail(`${name} must not contain spaces or control characters.`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return fail(`${name} must be an absolute URL.`);
  }
  if (parsed.protocol !== 'https:' && !(options.allowInsecure && parsed.protocol === 'http:')) {
    return fail(options.allowInsecure ? `${name} must use http or https.` : `${name} must use https.`);
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return fail(`${name} must not contain a user name or password.`);
  }
  if (url.includes('#')) return fail(`${name} must not contain a fragment (#).`);

  const host = parsed.hostname;
  if (host === '') return fail(`${name} must have a host.`);
  const literal = host.startsWith('[') ? host.slice(1, -1) : host;
  if (net.isIP(literal) !== 0) {
    const category = classifyIp(literal);
    if (category === 'public') return { ok: true };
    if (category === 'loopback' && options.allowInsecure) return { ok: true };
    return fail(`${name} must point to a publicly reachable host, not ${describeCategory(category)}.`);
  }
  // A DNS name. WHATWG has already lower-cased it and applied IDNA mapping (`ⓛocalhost` → `localhost`).
  const bare = host.endsWith('.') ? host.slice(0, -1) : host;
  if (bare === 'localhost' || bare.endsWith('.localhost')) {
    return options.allowInsecure ? { ok: true } : fail(`${name} must point to a publicly reachable host, not localhost.`);
  }
  if (options.allowInsecure) return { ok: true };
  if (!bare.includes('.')) return fail(`${name} must use a fully qualified public host name.`);
  if (NON_PUBLIC_SUFFIXES.some((suffix) => bare.endsWith(suffix))) {
    return fail(`${name} must point to a publicly reachable host.`);
  }
  return { ok: true };
}
