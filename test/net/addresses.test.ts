import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkWebhookUrl, classifyIp, isDeliverableIp, isHostName, isPublicIp } from '../../src/net/addresses.ts';

describe('classifyIp / isPublicIp', () => {
  const cases: Array<[string, ReturnType<typeof classifyIp>]> = [
    // IPv4 public
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['93.184.216.34', 'public'],
    ['172.15.255.255', 'public'],
    ['172.32.0.0', 'public'],
    ['100.63.255.255', 'public'],
    ['100.128.0.0', 'public'],
    ['192.169.0.1', 'public'],
    ['11.0.0.1', 'public'],
    ['223.255.255.255', 'public'],
    // IPv4 non-public
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.20.10.5', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.255', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['192.88.99.1', 'reserved'],
    // IPv6 public
    ['2606:4700:4700::1111', 'public'],
    ['2001:4860:4860::8888', 'public'],
    ['2a00:1450:4001:82a::200e', 'public'],
    ['[2606:4700:4700::1111]', 'public'],
    // IPv6 non-public
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['FE80::abcd:1', 'link-local'],
    ['febf::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'private'],
    ['fd12:3456:789a::1', 'private'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['2001::1', 'reserved'], // Teredo
    ['2001:2::1', 'reserved'], // benchmarking
    ['100::1', 'reserved'], // discard-only
    ['64:ff9b:1::a00:1', 'reserved'], // local-use NAT64
    ['4000::1', 'reserved'], // outside 2000::/3
    // IPv4-mapped, -compatible, NAT64, 6to4
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::FFFF:7F00:0001', 'loopback'],
    ['0:0:0:0:0:ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:a00:1', 'private'],
    ['::ffff:192.168.0.1', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['::ffff:8.8.8.8', 'public'],
    ['::127.0.0.1', 'reserved'],
    ['::7f00:1', 'reserved'],
    ['::8.8.8.8', 'reserved'],
    ['64:ff9b::127.0.0.1', 'reserved'],
    ['64:ff9b::a00:1', 'reserved'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['2002:7f00:1::1', 'reserved'],
    ['2002:c0a8:101::1', 'reserved'],
    ['2002:808:808::1', 'public'],
    // not addresses
    ['', 'invalid'],
    ['localhost', 'invalid'],
    ['example.com', 'invalid'],
    ['127.1', 'invalid'],
    ['2130706433', 'invalid'],
    ['0x7f.0.0.1', 'invalid'],
    ['010.0.0.1', 'invalid'],
    ['256.1.1.1', 'invalid'],
    ['1.2.3.4.5', 'invalid'],
    ['::ffff:1.2.3', 'invalid'],
    ['1:2:3:4:5:6:7:8:9', 'invalid'],
  ];
  for (const [ip, expected] of cases) {
    it(`${JSON.stringify(ip)} is ${expected}`, () => {
      assert.equal(classifyIp(ip), expected);
      assert.equal(isPublicIp(ip), expected === 'public');
    });
  }
});

describe('isDeliverableIp', () => {
  it('allows only public addresses by default', () => {
    assert.equal(isDeliverableIp('8.8.8.8', { allowInsecure: false }), true);
    for (const ip of ['127.0.0.1', '::1', '10.1.2.3', '192.168.0.10', 'fd00::1', '169.254.169.254', '0.0.0.0']) {
      assert.equal(isDeliverableIp(ip, { allowInsecure: false }), false, ip);
    }
  });
  it('with allowInsecure also allows loopback and private, never link-local or unspecified', () => {
    for (const ip of ['8.8.8.8', '127.0.0.1', '::1', '10.1.2.3', '172.18.0.2', '192.168.0.10', 'fd00::1', '::ffff:127.0.0.1']) {
      assert.equal(isDeliverableIp(ip, { allowInsecure: true }), true, ip);
    }
    for (const ip of ['169.254.169.254', 'fe80::1', '0.0.0.0', '::', '224.0.0.1', '255.255.255.255', '2001:db8::1', 'nope']) {
      assert.equal(isDeliverableIp(ip, { allowInsecure: true }), false, ip);
    }
  });
});

describe('checkWebhookUrl', () => {
  const strict = { allowInsecure: false };
  const insecure = { allowInsecure: true };
  const accepts = (url: string, options = strict): void => {
    assert.deepEqual(checkWebhookUrl(url, options), { ok: true }, url);
  };
  const rejects = (url: string, options = strict, match?: RegExp): void => {
    const result = checkWebhookUrl(url, options);
    assert.equal(result.ok, false, `${url} should be rejected`);
    if (!result.ok) {
      assert.match(result.reason, /^webhookURL .+\.$/, 'reason is a sentence naming the field');
      if (match) assert.match(result.reason, match, url);
    }
  };

  it('accepts public https URLs', () => {
    accepts('https://example.com/webhooks/kassa');
    accepts('https://shop.example.com:8443/hook?store=1&x=%20y');
    accepts('https://8.8.8.8/hook');
    accepts('https://[2606:4700:4700::1111]/hook');
    accepts('https://xn--80ak6aa92e.com/hook');
    accepts('https://example.com.'); // trailing dot: still a public name
  });

  it('rejects every prefix the seed lists', () => {
    for (const url of [
      'https://localhost/hook',
      'https://localhost:3000/hook',
      'https://127.0.0.1/hook',
      'https://127.1.2.3/hook',
      'https://0.0.0.0/hook',
      'https://10.0.0.1/hook',
      'https://10.200.1.1/hook',
      'https://192.168.0.1/hook',
      'https://192.168.255.255/hook',
      ...Array.from({ length: 16 }, (_, i) => `https://172.${16 + i}.0.1/hook`),
    ]) {
      rejects(url);
    }
    accepts('https://172.15.0.1/hook');
    accepts('https://172.32.0.1/hook');
  });

  it('names the kind of address in the reason', () => {
    rejects('https://127.0.0.1/', strict, /loopback/);
    rejects('https://10.0.0.1/', strict, /private/);
    rejects('https://169.254.169.254/latest/meta-data', strict, /link-local/);
    rejects('https://localhost/', strict, /localhost/);
  });

  it('rejects other non-public IP literals', () => {
    for (const url of [
      'https://169.254.169.254/',
      'https://100.64.0.1/',
      'https://224.0.0.1/',
      'https://255.255.255.255/',
      'https://192.0.2.1/',
      'https://[::1]/hook',
      'https://[0:0:0:0:0:0:0:1]/hook',
      'https://[::]/hook',
      'https://[fe80::1]/hook',
      'https://[fc00::1]/hook',
      'https://[fd00:1234::5]/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://[::ffff:7f00:1]/hook',
      'https://[::ffff:10.0.0.1]/hook',
      'https://[::ffff:192.168.1.1]/hook',
      'https://[::127.0.0.1]/hook',
      'https://[64:ff9b::127.0.0.1]/hook',
      'https://[2001:db8::1]/hook',
    ]) {
      rejects(url);
    }
  });

  it('sees through odd IPv4 spellings the URL parser normalises', () => {
    for (const url of [
      'https://2130706433/', // 127.0.0.1 as one decimal number
      'https://0x7f000001/',
      'https://0x7f.1/',
      'https://127.1/',
      'https://0177.0.0.1/', // octal
      'https://017700000001/',
      'https://%31%32%37.0.0.1/', // percent-encoded
      'https://167772161/', // 10.0.0.1
      'https://0xa9fea9fe/', // 169.254.169.254
      'https://0/',
      'https://LOCALHOST/',
      'https://ⓛocalhost/', // IDNA maps it to localhost
      'https://localhost./',
      'https://api.localhost/',
    ]) {
      rejects(url);
    }
  });

  it('requires https unless allowInsecure', () => {
    rejects('http://example.com/hook', strict, /must use https/);
    accepts('http://example.com/hook', insecure);
    rejects('ftp://example.com/hook', insecure, /http or https/);
    rejects('javascript:alert(1)');
    rejects('file:///etc/passwd');
    rejects('ws://example.com/');
  });

  it('with allowInsecure accepts loopback, but not private or link-local literals', () => {
    accepts('http://127.0.0.1:4000/hook', insecure);
    accepts('http://[::1]:4000/hook', insecure);
    accepts('http://localhost:4000/hook', insecure);
    accepts('https://localhost/hook', insecure);
    accepts('http://2130706433:4000/hook', insecure);
    accepts('http://merchant:8080/hook', insecure); // a compose service name
    rejects('http://10.0.0.5/hook', insecure);
    rejects('http://192.168.1.5/hook', insecure);
    rejects('http://169.254.169.254/', insecure);
    rejects('http://0.0.0.0:4000/', insecure);
    rejects('http://[fe80::1]/', insecure);
  });

  it('rejects credentials, fragments, whitespace and relative or malformed URLs', () => {
    rejects('https://user:pass@example.com/hook', strict, /user name or password/);
    rejects('https://user@example.com/hook', strict, /user name or password/);
    rejects('https://:pass@example.com/hook', strict, /user name or password/);
    rejects('https://example.com/hook#frag', strict, /fragment/);
    rejects('https://example.com/hook#', strict, /fragment/);
    rejects('https://example.com/ho\tok', strict, /spaces or control/);
    rejects(' https://example.com/hook', strict, /spaces or control/);
    rejects('https://example.com/hook\n', strict, /spaces or control/);
    rejects('/hook', strict, /absolute URL/);
    rejects('example.com/hook', strict, /absolute URL/);
    rejects('', strict, /absolute URL/);
    rejects('https://', strict, /absolute URL/);
    rejects('https://999.1.1.1/', strict, /absolute URL/);
    rejects(42 as unknown as string, strict, /absolute URL/);
  });

  it('rejects host names that cannot be public', () => {
    rejects('https://intranet/hook', strict, /fully qualified/);
    rejects('https://printer.local/hook');
    rejects('https://db.internal/hook');
    rejects('https://nas.home.arpa/hook');
  });

  it('counts at most 512 characters', () => {
    const base = 'https://example.com/';
    const at512 = base + 'a'.repeat(512 - base.length);
    assert.equal(at512.length, 512);
    accepts(at512);
    rejects(`${at512}a`, strict, /at most 512 characters/);
  });

  it('uses the given field name in reasons', () => {
    const result = checkWebhookUrl('http://example.com/', { allowInsecure: false, name: 'returnURL' });
    assert.deepEqual(result, { ok: false, reason: 'returnURL must use https.' });
  });
});

describe('isHostName', () => {
  it('takes DNS names (punycode included), IPv4 and bracketed IPv6 — what new URL gives as hostname', () => {
    for (const url of [
      'https://cdn.example.com/x',
      'https://xn--e1afmkfd.xn--p1ai/x',
      'https://пример.рф/x',
      'https://a-b.c1.io./x',
      'https://192.0.2.1/x',
      'https://[2001:db8::1]/x',
    ]) {
      assert.equal(isHostName(new URL(url).hostname), true, url);
    }
  });
  it('refuses what a header would read as more than a host: ; , quotes, spaces and other characters URL lets through', () => {
    for (const url of [
      'https://cdn.example.com;script-src/x',
      'https://a,b.example.com/x',
      "https://cdn.example.com'/x",
      'https://a*b.com/x',
      'https://-a.com/x',
      'https://a..b/x',
    ]) {
      assert.equal(isHostName(new URL(url).hostname), false, url);
    }
    assert.equal(isHostName(''), false);
    assert.equal(isHostName(`${'a'.repeat(64)}.com`), false);
  });
});
