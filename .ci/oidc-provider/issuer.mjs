// A real OpenID provider for the trusted-CI tests: panva's oidc-provider
// (certified by the OpenID Foundation), on 127.0.0.1 at a free port, with
// an RSA signing key of its own made at start. It serves what a CI's
// issuer serves (/.well-known/openid-configuration, its jwks_uri) and, as
// GitHub Actions' token service does for a job with id-token: write,
// GET /ci-token?audience=AUD with "Authorization: Bearer <request token>"
// answers {"value": <id token>}: an id token the provider signs (its own
// IdToken model, its own keystore) for the client AUD, with the job's
// claims (defaults below, overridden by the JSON of ?claims=).
//
// usage: node issuer.mjs REQUEST_TOKEN AUDIENCE...
// It prints one line of JSON, {"issuer","kid"}, once it listens, and runs
// until it is killed (or its standard input closes).
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import Provider from 'oidc-provider';

const [requestToken, ...audiences] = process.argv.slice(2);
if (!requestToken || audiences.length === 0) {
  console.error('usage: node issuer.mjs REQUEST_TOKEN AUDIENCE...');
  process.exit(2);
}

// A GitHub Actions job's claims (docs.github.com: "About security
// hardening with OpenID Connect"), and GitLab's project_id.
const jobClaims = ['repository', 'repository_id', 'repository_owner', 'ref', 'ref_type', 'environment', 'workflow', 'event_name', 'project_id', 'project_path'];
const defaults = {
  sub: 'repo:Codertocat/Hello-World:pull_request',
  repository: 'Codertocat/Hello-World',
  repository_id: '186853002',
  repository_owner: 'Codertocat',
  ref: 'refs/pull/2/merge',
  ref_type: 'branch',
  workflow: 'scan',
  event_name: 'pull_request',
};

const kid = `scangate-test-${process.pid}`;
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid, use: 'sig', alg: 'RS256' };

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    jwks: { keys: [jwk] },
    clients: audiences.map((aud) => ({
      client_id: aud,
      client_secret: 'not-used-by-the-tests-0123456789',
      redirect_uris: ['http://127.0.0.1/callback'],
      id_token_signed_response_alg: 'RS256',
    })),
    claims: { openid: ['sub', ...jobClaims] },
    findAccount: async (ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    ttl: { IdToken: 600 },
  });
  provider.use(async (ctx, next) => {
    if (ctx.path !== '/ci-token') return next();
    if (ctx.get('authorization') !== `Bearer ${requestToken}`) {
      ctx.status = 403;
      ctx.body = { message: 'no request token' };
      return undefined;
    }
    const client = await provider.Client.find(String(ctx.query.audience || ''));
    if (!client) {
      ctx.status = 400;
      ctx.body = { message: `no client for the audience ${ctx.query.audience}` };
      return undefined;
    }
    const claims = { ...defaults, ...JSON.parse(String(ctx.query.claims || '{}')) };
    const token = new provider.IdToken(claims, { client });
    token.scope = 'openid';
    ctx.body = { count: 1, value: await token.issue({ use: 'idtoken' }) };
    return undefined;
  });
  server.on('request', provider.callback());
  process.stdout.write(`${JSON.stringify({ issuer, kid })}\n`);
});

// The test that started it closes its standard input when it ends.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
