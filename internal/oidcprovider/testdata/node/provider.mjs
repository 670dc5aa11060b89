// A real OpenID Connect provider for scangate's tests (internal/oidcprovider
// starts it): node's oidc-provider with its development sign-in form
// (devInteractions: any password; the login names an account below), three
// people with `groups` claims, and the clients the test passes in
// OIDC_CLIENTS (JSON: oidc-provider's client metadata). It listens on
// 127.0.0.1 on a free port and prints "issuer <url>" once it is ready.
import http from 'node:http';
import Provider from 'oidc-provider';

// The people of the tests: their login name is their account id.
const accounts = {
  alice: {email: 'alice@example.com', name: 'Alice Admin', groups: ['sec-team', 'engineering']},
  rita: {email: 'rita@example.com', name: 'Rita Readonly', groups: ['auditors']},
  mallory: {email: 'mallory@example.com', name: 'Mallory Marketing', groups: ['marketing']},
};
// OIDC_ACCOUNTS (JSON, optional) adds or replaces people: a test that
// changes someone's groups between two sign-ins.
Object.assign(accounts, JSON.parse(process.env.OIDC_ACCOUNTS || '{}'));

const clients = JSON.parse(process.env.OIDC_CLIENTS || '[]');

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients,
    cookies: {keys: [process.env.OIDC_COOKIE_KEY || 'scangate-test-cookie-key']},
    pkce: {required: () => true},
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username'],
      groups: ['groups'],
    },
    // The id token carries the claims of the scopes (not only userinfo).
    conformIdTokenClaims: false,
    features: {devInteractions: {enabled: true}},
    async findAccount(ctx, id) {
      const a = accounts[id];
      if (!a) return undefined;
      return {
        accountId: id,
        async claims() {
          return {sub: id, email: a.email, email_verified: true, name: a.name, preferred_username: id, groups: a.groups};
        },
      };
    },
    // Every client here is first-party: its scopes are granted at sign-in,
    // without a consent page.
    async loadExistingGrant(ctx) {
      const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) {
        const g = await ctx.oidc.provider.Grant.find(grantId);
        if (g) return g;
      }
      const grant = new ctx.oidc.provider.Grant({clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId});
      grant.addOIDCScope('openid email profile groups');
      await grant.save();
      return grant;
    },
  });
  provider.on('server_error', (ctx, err) => console.error('server_error', err));
  server.on('request', provider.callback());
  console.log(`issuer ${issuer}`);
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => server.close(() => process.exit(0)));
