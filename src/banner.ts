// The lines `npm start` prints once the service is ready: where it answers and
// a curl command that works as printed. Behind a TLS-terminating proxy
// (TRUST_PROXY) clients use PUBLIC_BASE_URL, not this instance's own port.

export interface BannerInput {
  /** TRUST_PROXY: TLS ends at the proxy, this instance speaks plain HTTP behind it. */
  trustProxy: boolean;
  publicBaseUrl: string;
  /** HOST and the port the instance listens on. */
  host: string;
  port: number;
  /** The certificate file to hand to curl when the instance serves its own generated (self-signed) one. */
  caCertFile: string | undefined;
  /** The demo client's token file, as shown to the reader. */
  demoTokenFile: string;
  /** The built-in Stripe sandbox serves its pages under /sandbox/. */
  paymentsSandbox: boolean;
  /** The playground is served under /playground/ (outside production). */
  playground: boolean;
}

const LOCAL_HOSTS = ['127.0.0.1', '0.0.0.0', '::1', '::'];

/** The address of this instance itself. */
function instanceAddress(input: BannerInput, scheme: 'http' | 'https'): string {
  const host = LOCAL_HOSTS.includes(input.host) ? 'localhost' : input.host.includes(':') ? `[${input.host}]` : input.host;
  return `${scheme}://${host}:${input.port}`;
}

export function readyBanner(input: BannerInput): string {
  const auth = `-H "Authorization: Bearer $(cat ${input.demoTokenFile})"`;
  const pageLines = (base: string) =>
    (input.paymentsSandbox
      ? `Payments run on the built-in Stripe sandbox: confirm setup intents and 3-D Secure at ${base}/sandbox/ (README: Payments)\n`
      : '') + (input.playground ? `Playground: ${base}/playground/ (stations on a map, a demo user, a charging session to its invoice)\n` : '');
  if (input.trustProxy) {
    const base = input.publicBaseUrl;
    const direct = instanceAddress(input, 'http');
    return (
      `\nCharging Access is ready at ${base} through the proxy (API reference: ${base}/docs); this instance listens on ${direct}\n` +
      `Try it:\n  curl ${auth} ${base}/api/v1/users/\n` +
      // The proxy says the client's request was HTTPS; without it the instance answers 403 https_required.
      `This instance directly, as the proxy calls it:\n  curl -H "X-Forwarded-Proto: https" ${auth} ${direct}/api/v1/users/\n` +
      pageLines(base) +
      '\n'
    );
  }
  const address = instanceAddress(input, 'https');
  const cacert = input.caCertFile ? `--cacert ${input.caCertFile} ` : '';
  return (
    `\nCharging Access is ready at ${address} (API reference: ${address}/docs)\nTry it:\n  curl ${cacert}${auth} ${address}/api/v1/users/\n` +
    pageLines(address) +
    '\n'
  );
}
